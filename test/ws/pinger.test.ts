import { ok, strictEqual } from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { Pinger } from "../../src/ws/pinger.js";

/** A socket that notes when it was pinged (in mocked ms). */
class FakeSocket {
  readonly pings: number[] = [];
  constructor(
    readonly openedAt: number,
    private readonly clock: () => number,
  ) {}
  ping(): number {
    this.pings.push(this.clock());
    return 1;
  }
}

const INTERVAL_MS = 1_000;
const SLICE_MS = 50;
const SLICES = INTERVAL_MS / SLICE_MS;

describe("Pinger", () => {
  let now = 0;
  const clock = () => now;
  const advance = (ms: number) => {
    now += ms;
    mock.timers.tick(ms);
  };
  beforeEach(() => {
    now = 0;
    mock.timers.enable({ apis: ["setInterval"] });
  });
  afterEach(() => mock.timers.reset());

  it("pings 10,000 sockets once an interval, a slice at a time, never all at once", () => {
    const pinger = new Pinger(INTERVAL_MS);
    const sockets = Array.from({ length: 10_000 }, () => new FakeSocket(0, clock));
    for (const socket of sockets) pinger.add(socket);
    // The round under way began with the first socket: the crowd's is the next.
    advance(INTERVAL_MS);
    strictEqual(
      sockets.reduce((sum, s) => sum + s.pings.length, 0),
      1,
    );
    let before = 1;
    for (let slice = 0; slice < 3 * SLICES; slice++) {
      advance(SLICE_MS);
      const total = sockets.reduce((sum, s) => sum + s.pings.length, 0);
      // Evenly spread: 10,000 / 20 slices.
      strictEqual(total - before, 500, `slice ${slice}`);
      before = total;
    }
    sockets.forEach((socket, i) => {
      strictEqual(socket.pings.length, i === 0 ? 4 : 3);
    });
    pinger.stop();
  });

  it("under random opens and closes: a socket pinged at most twice in an interval and at least once in two, no slice over its share", () => {
    for (let seed = 1; seed <= 20; seed++) {
      now = 0;
      mock.timers.reset();
      mock.timers.enable({ apis: ["setInterval"] });
      let state = seed;
      const random = () => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        return state / 2 ** 31;
      };
      const pinger = new Pinger(INTERVAL_MS);
      const open = new Set<FakeSocket>();
      const all: FakeSocket[] = [];
      let most = 0;
      for (let step = 0; step < 8 * SLICES; step++) {
        // A storm now and then, closes at random, then the slice's timer.
        const opens = random() < 0.05 ? Math.floor(random() * 2_000) : Math.floor(random() * 20);
        for (let i = 0; i < opens; i++) {
          const socket = new FakeSocket(now, clock);
          open.add(socket);
          all.push(socket);
          pinger.add(socket);
        }
        for (const socket of open) {
          if (random() < 0.01) {
            open.delete(socket);
            pinger.delete(socket);
          }
        }
        most = Math.max(most, open.size);
        const before = all.reduce((sum, s) => sum + s.pings.length, 0);
        advance(SLICE_MS);
        const pinged = all.reduce((sum, s) => sum + s.pings.length, 0) - before;
        // A slice's share of a round, which pings at most as many as were ever open at once.
        ok(pinged <= Math.ceil(most / SLICES) + 1, `seed ${seed} step ${step}: ${pinged} of ${most}`);
        for (const socket of open) {
          const last = socket.pings.at(-1);
          // Once a round, rounds an interval long (a socket moves up a round as others close).
          ok(
            socket.pings.filter((at) => at > now - INTERVAL_MS).length <= 2,
            `seed ${seed}: pinged thrice in an interval`,
          );
          const since = last ?? socket.openedAt;
          ok(
            now - since <= 2 * INTERVAL_MS + SLICE_MS,
            `seed ${seed}: a socket went unpinged for ${now - since} ms`,
          );
        }
      }
      pinger.stop();
    }
  });

  it("pings nothing once stopped, or with an interval of 0", () => {
    const stopped = new Pinger(INTERVAL_MS);
    const socket = new FakeSocket(0, clock);
    stopped.add(socket);
    stopped.stop();
    const off = new Pinger(0);
    const other = new FakeSocket(0, clock);
    off.add(other);
    advance(5 * INTERVAL_MS);
    strictEqual(socket.pings.length, 0);
    strictEqual(other.pings.length, 0);
  });

  it("never pings a socket after its close", () => {
    const pinger = new Pinger(INTERVAL_MS);
    const sockets = Array.from({ length: 100 }, () => new FakeSocket(0, clock));
    for (const socket of sockets) pinger.add(socket);
    advance(INTERVAL_MS / 2);
    const closed = sockets.filter((_, i) => i % 2 === 0);
    const counts = closed.map((s) => s.pings.length);
    for (const socket of closed) pinger.delete(socket);
    advance(3 * INTERVAL_MS);
    closed.forEach((socket, i) => {
      strictEqual(socket.pings.length, counts[i]);
    });
    pinger.stop();
  });
});
