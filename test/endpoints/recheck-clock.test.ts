import { deepStrictEqual, ok } from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it, mock } from "node:test";
import { type Rechecked, recheckClock } from "../../src/endpoints/recheck-clock.js";
import { seededRandom } from "../support/seeded-random.js";

/** A fresh clock per test: the clocks are the thread's, one per interval. */
let nextInterval = 1_000;
const freshInterval = () => (nextInterval += 10);

/** A token's digest, as the gates' groups are. */
const digest = (token: string) => createHash("sha256").update(token).digest("hex");

/** Runs `body` with setInterval on the test's clock; `now()` is that clock. */
function withMockedTime(body: (advance: (ms: number) => void, now: () => number) => void): void {
  mock.timers.enable({ apis: ["setInterval"] });
  let now = 0;
  try {
    body(
      (ms) => {
        for (let step = 0; step < ms; step++) {
          now += 1;
          mock.timers.tick(1);
        }
      },
      () => now,
    );
  } finally {
    mock.timers.reset();
  }
}

/** A subscriber that records when it was re-checked. */
class Recorded implements Rechecked {
  readonly at: number[] = [];
  constructor(
    readonly group: string,
    readonly joinedAt: number,
    private readonly now: () => number,
  ) {}

  recheck(): void {
    this.at.push(this.now());
  }
}

describe("the re-check clock", () => {
  it("re-checks every subscriber once an interval, one token's together, none after it left, whatever the interleaving", () => {
    for (let seed = 1; seed <= 20; seed++) {
      withMockedTime((advance, now) => {
        const interval = freshInterval();
        const clock = recheckClock(interval);
        const random = seededRandom(seed);
        const groups = Array.from({ length: 12 }, (_, i) => digest(`token ${seed} ${i}`));
        const on = new Set<Recorded>();
        const left = new Map<Recorded, number>();
        for (let step = 0; step < 300; step++) {
          const roll = random();
          if (roll < 0.35) {
            const subscriber = new Recorded(
              groups[Math.floor(random() * groups.length)] as string,
              now(),
              now,
            );
            clock.every(subscriber, subscriber.group);
            on.add(subscriber);
          } else if (roll < 0.5 && on.size > 0) {
            const subscriber = [...on][Math.floor(random() * on.size)] as Recorded;
            clock.stop(subscriber);
            on.delete(subscriber);
            left.set(subscriber, now());
          } else {
            advance(Math.floor(random() * interval * 0.4));
          }
          // Invariants, at every step.
          for (const subscriber of on) {
            const last = subscriber.at.at(-1) ?? subscriber.joinedAt;
            ok(now() - last <= interval, `seed ${seed}: not re-checked for ${now() - last} ms`);
            for (let i = 1; i < subscriber.at.length; i++)
              deepStrictEqual(
                (subscriber.at[i] as number) - (subscriber.at[i - 1] as number),
                interval,
                `seed ${seed}: re-checks one interval apart`,
              );
          }
          for (const [subscriber, at] of left)
            ok((subscriber.at.at(-1) ?? -1) <= at, `seed ${seed}: re-checked after it left`);
          // One token's subscribers on the clock at a tick were all re-checked at it.
          const byGroup = new Map<string, Recorded[]>();
          for (const subscriber of on)
            byGroup.set(subscriber.group, [...(byGroup.get(subscriber.group) ?? []), subscriber]);
          for (const members of byGroup.values()) {
            const ticks = new Set(members.flatMap((member) => member.at));
            for (const tick of ticks)
              for (const member of members)
                if (member.joinedAt < tick)
                  ok(member.at.includes(tick), `seed ${seed}: one token's re-checks apart`);
          }
        }
        for (const subscriber of on) clock.stop(subscriber);
      });
    }
  });

  it("spreads different tokens' re-checks over the interval", () => {
    withMockedTime((advance, now) => {
      const interval = freshInterval();
      const clock = recheckClock(interval);
      const tokens = Array.from({ length: 100 }, (_, i) => new Recorded(digest(`crowd token ${i}`), 0, now));
      // A crowd of one token as well: its 50 come due in one tick.
      const crowd = Array.from({ length: 50 }, () => new Recorded(digest("the crowd's token"), 0, now));
      for (const subscriber of [...tokens, ...crowd]) clock.every(subscriber, subscriber.group);
      advance(interval);
      const ticks = new Map<number, number>();
      for (const subscriber of tokens) {
        deepStrictEqual(subscriber.at.length, 1);
        const at = subscriber.at[0] as number;
        ticks.set(at, (ticks.get(at) ?? 0) + 1);
      }
      ok(ticks.size >= 8, `100 tokens in ${ticks.size} ticks of an interval`);
      ok(Math.max(...ticks.values()) <= 25, `a tick re-checked ${Math.max(...ticks.values())} tokens of 100`);
      deepStrictEqual(new Set(crowd.map((subscriber) => subscriber.at.join())).size, 1);
      for (const subscriber of [...tokens, ...crowd]) clock.stop(subscriber);
    });
  });

  it("re-checks a large token's crowd a slice a turn, and none that left before its slice", async () => {
    // setImmediate stays real: the slices after the first come in later turns of the event loop.
    mock.timers.enable({ apis: ["setInterval"] });
    try {
      const interval = freshInterval();
      const clock = recheckClock(interval);
      let rechecks = 0;
      const crowd = Array.from({ length: 1_200 }, () => ({ recheck: () => rechecks++ }));
      for (const subscriber of crowd) clock.every(subscriber, digest("one token"));
      for (let ms = 0; ms < interval && rechecks === 0; ms++) mock.timers.tick(1);
      // The phase's tick made its first slice; the rest wait for their turns of the event loop.
      ok(rechecks > 0 && rechecks < crowd.length, `${rechecks} re-checked in the tick's own turn`);
      const first = rechecks;
      for (const subscriber of crowd.slice(first, first + 100)) clock.stop(subscriber);
      for (let turn = 0; turn < 4; turn++) await new Promise((resolve) => setImmediate(resolve));
      // Every one still on the clock, and none of the 100 that left before their slice.
      deepStrictEqual(rechecks, crowd.length - 100);
      for (const subscriber of crowd) clock.stop(subscriber);
    } finally {
      mock.timers.reset();
    }
  });
});
