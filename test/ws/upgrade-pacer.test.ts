import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { type Arrival, type Ticket, type TurnWaiter, UpgradePacer } from "../../src/ws/upgrade-pacer.js";

/** A pacer on a clock the test moves, with node's timers mocked to move with it. */
function pacerAt(perSecond: number, maxWaitMs: number) {
  let now = 1_000;
  const pacer = new UpgradePacer(perSecond, maxWaitMs, () => now);
  return {
    pacer,
    time: () => now,
    arrive: (user = "alice"): Arrival => pacer.arrive(user),
    advance: (ms: number) => {
      now += ms;
      mock.timers.tick(ms);
    },
  };
}

function taken(arrival: Arrival): Ticket {
  if (arrival.kind !== "taken") throw new Error(`refused: ${JSON.stringify(arrival)}`);
  return arrival.ticket;
}

/** For an upgrade the test expects to go out: a refusal fails the test. */
const notRefused = (retryAfterSeconds: number): never => {
  throw new Error(`refused at its turn (Retry-After ${retryAfterSeconds})`);
};

/** A released upgrade's waiter: `came` in its turn, `refused` if the pace missed it. */
function waiter(came: () => void, refused: (retryAfterSeconds: number) => void = notRefused): TurnWaiter {
  return { turnCame: came, turnRefused: refused };
}

/** Runs `body` with node's setTimeout on the test's clock. */
function withMockedTimers(body: () => void): void {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    body();
  } finally {
    mock.timers.reset();
  }
}

describe("upgrade pacer", () => {
  it("takes a burst of 50 ms worth and what the pace upgrades within the longest wait, refuses the rest", () => {
    const { arrive } = pacerAt(100, 30); // 10 ms apart, a burst of 5, 30 ms of waiting: 3 more
    const users = ["a", "b", "c", "d", "e"];
    const arrivals = Array.from({ length: 10 }, (_, i) => arrive(users[i % users.length]).kind);
    deepStrictEqual(arrivals, [...Array(8).fill("taken"), "refuse", "refuse"]);
  });

  it("lets one user hold at most half of that, whoever else comes", () => {
    const { arrive } = pacerAt(100, 30); // a horizon of 8 upgrades: 4 a user
    const flood = Array.from({ length: 6 }, () => arrive("mallory").kind);
    deepStrictEqual(flood, [...Array(4).fill("taken"), "refuse", "refuse"]);
    // The other half is everyone else's.
    deepStrictEqual(
      ["alice", "bob", "alice", "bob"].map((user) => arrive(user).kind),
      ["taken", "taken", "taken", "taken"],
    );
    strictEqual(arrive("carol").kind, "refuse");
  });

  it("gives a user's share back as its upgrades go out or are abandoned", () => {
    withMockedTimers(() => {
      const { arrive } = pacerAt(100, 30);
      const tickets = Array.from({ length: 4 }, () => taken(arrive("mallory")));
      strictEqual(arrive("mallory").kind, "refuse");
      tickets[0]?.abandon();
      tickets[0]?.abandon(); // once is what counts
      const again = taken(arrive("mallory"));
      strictEqual(arrive("mallory").kind, "refuse");
      let upgraded = 0;
      tickets[1]?.release(waiter(() => upgraded++));
      strictEqual(upgraded, 1);
      tickets[1]?.abandon(); // settled already: no share given back twice
      strictEqual(taken(arrive("mallory")) !== again, true);
      strictEqual(arrive("mallory").kind, "refuse");
    });
  });

  it("gives an abandoned upgrade's slot back: upgrades refused by their admission take nothing of the pace", () => {
    const { arrive } = pacerAt(100, 30); // a horizon of 8
    // A flood of forged tokens, each of another made-up user, each refused once its token is read.
    for (let round = 0; round < 5; round++) {
      const flood = Array.from({ length: 8 }, (_, i) => taken(arrive(`forged-${round}-${i}`)));
      for (const ticket of flood) ticket.abandon();
    }
    // The pace is whole for the next users.
    deepStrictEqual(
      Array.from({ length: 9 }, (_, i) => arrive(`user-${i}`).kind),
      [...Array(8).fill("taken"), "refuse"],
    );
  });

  it("tells the refused to come back within upgrade-max-wait and 5 s of the pace's last slot, however many were refused", () => {
    const { arrive } = pacerAt(20, 2_000); // 50 ms apart, a horizon of 41
    for (let i = 0; i < 41; i++) taken(arrive(`user-${i}`));
    const told = Array.from({ length: 5_000 }, (_, i) => arrive(`flood-${i}`));
    const seconds = told.map((arrival) => (arrival.kind === "refuse" ? arrival.retryAfterSeconds : 0));
    ok(
      seconds.every((s) => s >= 1),
      "every one refused",
    );
    // The pace's last slot is 2.05 s out: at most that + 2 + 5 s (10 whole seconds), not 5,000
    // slots (250 s) out.
    strictEqual(Math.max(...seconds), 10);
  });

  it("tells the refused to come back one slot apart, in whole seconds, and a refusal takes no slot", () => {
    withMockedTimers(() => {
      const { arrive, advance } = pacerAt(2, 0); // 500 ms apart, a burst of 1, no waiting
      strictEqual(arrive("a").kind, "taken");
      const told = ["b", "c", "d", "e"].map((user) => arrive(user));
      deepStrictEqual(told, [
        { kind: "refuse", retryAfterSeconds: 1 }, // its slot 1 s on
        { kind: "refuse", retryAfterSeconds: 2 }, // 1.5 s
        { kind: "refuse", retryAfterSeconds: 2 }, // 2 s
        { kind: "refuse", retryAfterSeconds: 3 }, // 2.5 s
      ]);
      // The first refused, back after its Retry-After, finds a slot: the refusals took none.
      advance(1_000);
      strictEqual(arrive("b").kind, "taken");
    });
  });

  it("upgrades a burst at once and the rest at the pace, however many were admitted together", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 10_000); // a burst of 5, then one per 10 ms
      const tickets = Array.from({ length: 12 }, () => taken(pacer.arrive("alice")));
      const upgraded: number[] = [];
      for (const [i, ticket] of tickets.entries()) ticket.release(waiter(() => upgraded.push(i)));
      deepStrictEqual(upgraded, [0, 1, 2, 3, 4]);
      // Served every 50 ms, a turn's worth together (5 at 100 a second).
      advance(30);
      strictEqual(upgraded.length, 5);
      advance(20);
      strictEqual(upgraded.length, 10);
      advance(50);
      deepStrictEqual(upgraded, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      strictEqual(pacer.waiting, 0);
    });
  });

  it("sends what comes once the pace is spent out together at the next turn, not one by one as it refills", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 10_000); // a burst of 5, one more every 10 ms
      const upgraded: string[] = [];
      for (let i = 0; i < 5; i++)
        taken(pacer.arrive("alice")).release(waiter(() => upgraded.push(`burst ${i}`)));
      strictEqual(upgraded.length, 5);
      // A storm's retries come back at the pace: each finds one slot refilled.
      advance(10);
      taken(pacer.arrive("alice")).release(waiter(() => upgraded.push("retry 1")));
      advance(10);
      taken(pacer.arrive("bob")).release(waiter(() => upgraded.push("retry 2")));
      advance(10);
      taken(pacer.arrive("alice")).release(waiter(() => upgraded.push("retry 3")));
      strictEqual(upgraded.length, 5, "none goes out alone");
      advance(20);
      deepStrictEqual(upgraded.slice(5), ["retry 1", "retry 2", "retry 3"]);
      // A turn left some of the pace unspent: a quiet worker upgrades at once again.
      advance(200);
      taken(pacer.arrive("carol")).release(waiter(() => upgraded.push("quiet")));
      strictEqual(upgraded.at(-1), "quiet");
    });
  });

  it("serves the queue a user at a time: an upgrade admitted behind a flood goes out in the next turn", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 10_000); // 5 a turn
      const order: string[] = [];
      const flood = Array.from({ length: 20 }, () => taken(pacer.arrive("mallory")));
      for (const ticket of flood) ticket.release(waiter(() => order.push("mallory")));
      taken(pacer.arrive("alice")).release(waiter(() => order.push("alice")));
      taken(pacer.arrive("bob")).release(waiter(() => order.push("bob")));
      deepStrictEqual(order, Array(5).fill("mallory"));
      advance(50);
      deepStrictEqual(order.slice(5), ["mallory", "alice", "bob", "mallory", "mallory"]);
    });
  });

  it("withdraws a queued upgrade whose client left: the next one takes its place in the turn", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 10_000); // 5 a turn
      const out: number[] = [];
      const tickets = Array.from({ length: 12 }, () => taken(pacer.arrive("alice")));
      for (const [i, ticket] of tickets.entries()) ticket.release(waiter(() => out.push(i)));
      deepStrictEqual(out, [0, 1, 2, 3, 4]);
      strictEqual(pacer.waiting, 7);
      tickets[5]?.abandon();
      tickets[6]?.abandon();
      tickets[0]?.abandon(); // already out: nothing
      strictEqual(pacer.waiting, 5);
      advance(50);
      deepStrictEqual(out.slice(5), [7, 8, 9, 10, 11]);
      strictEqual(pacer.waiting, 0);
    });
  });

  it("upgrades at once again after a quiet spell: the pace is a rate, not a count", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 10_000);
      let upgraded = 0;
      for (let i = 0; i < 5; i++) taken(pacer.arrive("alice")).release(waiter(() => upgraded++));
      advance(60);
      for (let i = 0; i < 5; i++) taken(pacer.arrive("alice")).release(waiter(() => upgraded++));
      strictEqual(upgraded, 10);
      strictEqual(pacer.waiting, 0);
    });
  });

  it("slows down when its turns come late and climbs back when they come on time", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(1_000, 10_000); // 50 a turn
      for (let i = 0; i < 2_000; i++) taken(pacer.arrive(`user-${i % 10}`)).release(waiter(() => undefined));
      strictEqual(pacer.rate, 1_000);
      // The worker was busy: the turn due in 50 ms ran 120 ms late.
      advance(170);
      strictEqual(Math.round(pacer.rate), 667);
      advance(170);
      strictEqual(Math.round(pacer.rate), 444);
      for (let late = 0; late < 10; late++) advance(170);
      strictEqual(pacer.rate, 100); // a tenth at the least
      // On time again: a twentieth of the pace back with each turn.
      advance(50);
      strictEqual(pacer.rate, 150);
      for (let turn = 0; turn < 30; turn++) advance(50);
      strictEqual(pacer.rate, 1_000);
    });
  });

  it("refuses at its turn an upgrade that the slowed pace could not make within the longest wait", () => {
    withMockedTimers(() => {
      const { pacer, advance } = pacerAt(100, 300); // 5 a turn, a horizon of 35: 17 a user
      const outcomes: string[] = [];
      for (let i = 0; i < 30; i++)
        taken(pacer.arrive(`user-${i % 2}`)).release(
          waiter(
            () => outcomes.push("upgraded"),
            (retryAfter) => outcomes.push(`refused ${retryAfter}`),
          ),
        );
      strictEqual(outcomes.length, 5);
      // Every turn late: the pace falls to 10 a second, 1 a turn.
      for (let turn = 0; turn < 4; turn++) advance(110);
      const upgraded = outcomes.filter((outcome) => outcome === "upgraded").length;
      const refused = outcomes.filter((outcome) => outcome.startsWith("refused"));
      strictEqual(upgraded + refused.length, 30);
      ok(upgraded < 30 && refused.length > 0, JSON.stringify(outcomes));
      for (const refusal of refused) ok(Number(refusal.split(" ")[1]) >= 1, refusal);
      strictEqual(pacer.waiting, 0);
    });
  });

  it("holds its invariants at every step of random interleavings of arrivals, releases, abandons and time", () => {
    // Model-based: a seeded random run of the pacer's operations, late turns included, each step
    // checked against what the pacer promised: every released upgrade goes out once, in its
    // user's order, within the longest wait of its arrival, or is refused once it waited past it;
    // the pace is never overdrawn; no user holds more than its share; nothing is kept once settled.
    withMockedTimers(() => {
      let seed = 39;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      const perSecond = 200; // a burst of 10, a horizon of 10 + 200 * 0.25 = 60: 30 a user
      const maxWaitMs = 250;
      const { pacer, advance, time } = pacerAt(perSecond, maxWaitMs);
      const users = ["a", "b", "c"];
      const open: { user: string; ticket: Ticket; arrivedAt: number }[] = [];
      const held = new Map<string, number>(users.map((user) => [user, 0]));
      const released = new Map<string, number[]>(users.map((user) => [user, []]));
      const settled = new Map<string, number[]>(users.map((user) => [user, []]));
      let serial = 0;
      let refusedAtTurn = 0;
      let withdrawn = 0;
      // The pace as a token bucket of the burst (10) refilled at perSecond: never overdrawn.
      let bucket = 10;
      let bucketAt = time();
      const spend = () => {
        bucket = Math.min(10, bucket + ((time() - bucketAt) * perSecond) / 1000) - 1;
        bucketAt = time();
        ok(bucket > -1e-9, `the pace overdrawn at ${time()} ms`);
      };
      for (let step = 0; step < 5_000; step++) {
        const roll = random();
        const user = users[Math.floor(random() * users.length)] as string;
        if (roll < 0.45) {
          const arrival = pacer.arrive(user);
          if (arrival.kind === "taken") {
            open.push({ user, ticket: arrival.ticket, arrivedAt: time() });
            held.set(user, (held.get(user) ?? 0) + 1);
          } else ok(arrival.retryAfterSeconds >= 1);
        } else if (roll < 0.8 && open.length > 0) {
          const [{ user: owner, ticket, arrivedAt }] = open.splice(Math.floor(random() * open.length), 1) as [
            { user: string; ticket: Ticket; arrivedAt: number },
          ];
          if (random() < 0.8) {
            const id = serial++;
            released.get(owner)?.push(id);
            let out = false;
            const settle = () => {
              ok(!out, `upgrade ${id} settled twice`);
              out = true;
              settled.get(owner)?.push(id);
              held.set(owner, (held.get(owner) ?? 0) - 1);
            };
            ticket.release(
              waiter(
                () => {
                  ok(time() - arrivedAt <= maxWaitMs, `upgraded ${time() - arrivedAt} ms after its arrival`);
                  settle();
                  spend();
                },
                (retryAfterSeconds) => {
                  ok(time() - arrivedAt > maxWaitMs, `refused ${time() - arrivedAt} ms after its arrival`);
                  ok(retryAfterSeconds >= 1);
                  refusedAtTurn++;
                  settle();
                },
              ),
            );
            // Now and then its client leaves while it waits its turn: withdrawn unless already out.
            if (random() < 0.3) {
              const wasOut = out;
              ticket.abandon();
              if (!wasOut) {
                // Never to go out: no longer expected of its user, and its share is back.
                const list = released.get(owner) as number[];
                list.splice(list.indexOf(id), 1);
                held.set(owner, (held.get(owner) ?? 0) - 1);
                withdrawn++;
              }
            }
          } else {
            ticket.abandon();
            held.set(owner, (held.get(owner) ?? 0) - 1);
          }
        } else {
          // Mostly on time; now and then the worker was busy and a turn comes late.
          advance(random() < 0.9 ? Math.floor(random() * 15) : 100 + Math.floor(random() * 150));
        }
        ok(pacer.rate >= perSecond / 10 && pacer.rate <= perSecond, `rate ${pacer.rate}`);
        for (const name of users) {
          ok((held.get(name) ?? 0) <= 30, `${name} holds ${held.get(name)} of 30`);
          // Each user's upgrades settle in the order released, each once.
          const done = settled.get(name) ?? [];
          deepStrictEqual(done, released.get(name)?.slice(0, done.length));
        }
      }
      ok(refusedAtTurn > 0, "no late turn ever refused an upgrade: the run did not test it");
      ok(withdrawn > 0, "no queued upgrade was ever withdrawn: the run did not test it");
      for (const { user, ticket } of open) {
        ticket.abandon();
        held.set(user, (held.get(user) ?? 0) - 1);
      }
      for (let turn = 0; turn < 200; turn++) advance(50);
      strictEqual(pacer.waiting, 0);
      for (const name of users) {
        strictEqual(held.get(name), 0);
        deepStrictEqual(settled.get(name), released.get(name));
        // Its whole share is back: it may hold 30 again (once the pace has the room).
        for (let turn = 0; turn < 20; turn++) advance(50);
        const again = Array.from({ length: 31 }, () => pacer.arrive(name));
        // The quiet spell gave the pace back whatever the run's late turns took of it.
        strictEqual(pacer.rate, perSecond);
        strictEqual(again.filter((arrival) => arrival.kind === "taken").length, 30);
        for (const arrival of again) if (arrival.kind === "taken") arrival.ticket.abandon();
      }
    });
  });
});
