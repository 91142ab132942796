import type { Stage } from "./load-options.js";

/**
 * The open model's schedule: when each request is due, whatever became of the ones before it (a
 * tester's arrival rate, not a client's loop). Segments of linearly changing rate, per second:
 * the warm-up at the first rate, then the stages (k6's ramping arrival rate: each stage goes from
 * the previous stage's rate to its own). Arrival i is due when the integral of the rate reaches i.
 */
interface Segment {
  startMs: number;
  durationMs: number;
  /** Requests per ms at the segment's start and its end. */
  from: number;
  to: number;
  /** Arrivals due before the segment. */
  before: number;
}

export class ArrivalSchedule {
  private readonly segments: Segment[] = [];
  readonly endMs: number;

  constructor(stages: readonly Stage[], startRate: number, warmUpMs: number) {
    let at = 0;
    let before = 0;
    let rate = startRate / 1000;
    const add = (durationMs: number, to: number) => {
      this.segments.push({ startMs: at, durationMs, from: rate, to, before });
      before += ((rate + to) / 2) * durationMs;
      at += durationMs;
      rate = to;
    };
    const first = (startRate > 0 ? startRate : (stages[0]?.rate ?? 0)) / 1000;
    if (warmUpMs > 0) {
      rate = first;
      add(warmUpMs, first);
      rate = startRate > 0 ? first : 0;
    }
    for (const stage of stages) add(stage.durationMs, stage.rate / 1000);
    this.endMs = at;
  }

  /** When arrival `i` (0, 1, ...) is due, in ms from the start; undefined past the end. */
  dueAt(i: number): number | undefined {
    for (const s of this.segments) {
      const inSegment = ((s.from + s.to) / 2) * s.durationMs;
      const k = i - s.before;
      if (k >= inSegment) continue;
      const slope = (s.to - s.from) / s.durationMs;
      // k = from * t + slope * t^2 / 2, for t in [0, duration).
      const t =
        Math.abs(slope) < 1e-12
          ? k / s.from
          : (-s.from + Math.sqrt(Math.max(0, s.from * s.from + 2 * slope * k))) / slope;
      return s.startMs + t;
    }
    return undefined;
  }
}

/**
 * Fires `send(i, dueMs)` for every arrival as its time comes, late ones at once (a timer of 1 ms
 * granularity: a request is sent at most a timer tick after it is due, and its latency counts
 * from when it was due). Resolves when the schedule has ended, or once `stopped`.
 */
export function runArrivals(
  schedule: ArrivalSchedule,
  startedAt: number,
  now: () => number,
  send: (i: number, dueMs: number) => void,
  stopped: () => boolean = () => false,
): Promise<void> {
  return new Promise((resolve) => {
    let i = 0;
    let next = schedule.dueAt(0);
    const tick = () => {
      const elapsed = now() - startedAt;
      while (next !== undefined && next <= elapsed && !stopped()) {
        send(i, next);
        i++;
        next = schedule.dueAt(i);
      }
      if (next === undefined || elapsed >= schedule.endMs || stopped()) {
        resolve();
        return;
      }
      setTimeout(tick, Math.max(0, Math.min(5, next - elapsed - 1)));
    };
    tick();
  });
}
