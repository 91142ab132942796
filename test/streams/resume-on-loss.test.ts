import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import type { Observable } from "rxjs";
import { resumeOnLoss, type StreamPosition } from "../../src/streams/resume-on-loss.js";
import { testScheduler } from "./marbles.js";

/** Elements are their positions; `c` suffix: a checkpoint. */
const E: Record<string, StreamPosition> = {
  a: { offset: 1, checkpoint: false },
  b: { offset: 2, checkpoint: false },
  k: { offset: 2, checkpoint: true },
  c: { offset: 3, checkpoint: false },
  d: { offset: 4, checkpoint: false },
};
const LOST = Object.assign(new Error("Connection dropped: GOAWAY"), { code: 14 });
const REFUSED = Object.assign(new Error("permission denied"), { code: 7 });
const isLoss = (error: unknown) => (error as { code?: number }).code === 14;

/** The calls made: each reopen gets the next source; `after` records where each started. */
function calls(sources: Observable<StreamPosition>[]) {
  const afters: (StreamPosition | undefined)[] = [];
  const open = (after: StreamPosition | undefined) => {
    afters.push(after);
    return sources[afters.length - 1] as Observable<StreamPosition>;
  };
  return { open, afters };
}

describe("resumeOnLoss", () => {
  it("passes elements, completion and the stream's own errors through", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const options = { position: (e: StreamPosition) => e, isLoss, windowMs: 1000 };
      expectObservable(resumeOnLoss(() => cold("a-b|", E), options)).toBe("a-b|", E);
      expectObservable(resumeOnLoss(() => cold("a-#", E, REFUSED), options)).toBe("a-#", E, REFUSED);
    });
  });

  it("reopens after the last element on a loss: no gap, no duplicate", () => {
    let afters: (StreamPosition | undefined)[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const made = calls([cold("a-b-#", E, LOST), cold("b-c-d|", E)]);
      afters = made.afters;
      // Lost at 4 ms; reopened 100 ms later; its first element (b again) is skipped.
      expectObservable(resumeOnLoss(made.open, { position: (e) => e, isLoss, windowMs: 1000 })).toBe(
        "a-b 103ms c-d|",
        E,
      );
    });
    deepStrictEqual(afters, [undefined, E.b]);
  });

  it("delivers a checkpoint at the last element's offset once, and not again", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      // After b (a transaction at 2) the reopened call's checkpoint at 2 is new.
      const first = calls([cold("a-b-#", E, LOST), cold("k-c|", E)]);
      expectObservable(resumeOnLoss(first.open, { position: (e) => e, isLoss, windowMs: 1000 })).toBe(
        "a-b 101ms k-c|",
        E,
      );
      // After k (the checkpoint at 2) a checkpoint at 2 is a duplicate.
      const second = calls([cold("a-k-#", E, LOST), cold("k-c|", E)]);
      expectObservable(resumeOnLoss(second.open, { position: (e) => e, isLoss, windowMs: 1000 })).toBe(
        "a-k 103ms c|",
        E,
      );
    });
  });

  it("retries while the ledger is away (100 ms, doubling) and fails with the loss past the window", () => {
    let afters: (StreamPosition | undefined)[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const away = cold<StreamPosition>("#", undefined, LOST);
      const made = calls([cold("a#", E, LOST), away, away, away, away]);
      afters = made.afters;
      // Lost at 1 ms; retries at 101, 301, 701 ms; the window (800 ms from the loss) ends at 801.
      expectObservable(resumeOnLoss(made.open, { position: (e) => e, isLoss, windowMs: 800 })).toBe(
        "a 800ms #",
        E,
        LOST,
      );
    });
    // Every retry starts after the one element delivered.
    deepStrictEqual(afters, [undefined, E.a, E.a, E.a, E.a]);
  });

  it("tells onResume once a reopened call held, with how long the stream was down", () => {
    const resumes: number[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const away = cold<StreamPosition>("#", undefined, LOST);
      const { open } = calls([cold("a#", E, LOST), away, cold("----------b|", E)]);
      expectObservable(
        resumeOnLoss(open, {
          position: (e) => e,
          isLoss,
          windowMs: 5000,
          onResume: (_lost, downMs) => resumes.push(downMs),
        }),
      ).toBe("a 310ms b|", E);
    });
    // Lost at 1 ms, away at 101 ms, reopened for good at 301 ms.
    deepStrictEqual(resumes, [300]);
  });

  it("counts a reopened call that held for a second as a resume: its later failure is a new loss", () => {
    const resumes: number[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const quiet = cold<StreamPosition>("2000ms #", undefined, LOST);
      const { open } = calls([cold("a#", E, LOST), quiet, cold("b|", E)]);
      // Lost at 1; reopened at 101 and quiet until it fails at 2101 (past a 1 s window counted from
      // the first loss, but it had held): reopened again at 2201.
      expectObservable(
        resumeOnLoss(open, {
          position: (e) => e,
          isLoss,
          windowMs: 1000,
          onResume: (_lost, downMs) => resumes.push(downMs),
        }),
      ).toBe("a 2200ms b|", E);
    });
    deepStrictEqual(resumes, [100, 100]);
  });

  it("ends with the loss it was resuming from when a reopened call is refused (the offset is gone)", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const { open } = calls([cold("a#", E, LOST), cold<StreamPosition>("#", undefined, REFUSED)]);
      expectObservable(resumeOnLoss(open, { position: (e) => e, isLoss, windowMs: 1000 })).toBe(
        "a 100ms #",
        E,
        LOST,
      );
    });
  });

  it("never resumes with a window of 0", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const { open } = calls([cold("a#", E, LOST)]);
      expectObservable(resumeOnLoss(open, { position: (e) => e, isLoss, windowMs: 0 })).toBe("a#", E, LOST);
    });
  });

  it("moves the call on request: reopened at once after the last element, nothing lost or repeated", () => {
    let afters: (StreamPosition | undefined)[] = [];
    const resumes: unknown[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // The first call would go on (c, d) but is moved at 3 ms, after b; the second repeats b.
      const made = calls([cold("a-b-c-d|", E), cold("b-c-d|", E)]);
      afters = made.afters;
      const moves$ = hot("---m", { m: undefined });
      expectObservable(
        resumeOnLoss(made.open, {
          position: (e) => e,
          isLoss,
          windowMs: 1000,
          moves$,
          onResume: (lost) => resumes.push(lost),
        }),
      ).toBe("a-b-- c-d|", E);
    });
    deepStrictEqual(afters, [undefined, E.b]);
    // A plain move (a renewed token) is no resume.
    deepStrictEqual(resumes, []);
  });

  it("counts a move off a closing connection as a resume once the new call delivers", () => {
    const resumes: { lost: unknown; downMs: number }[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const { open } = calls([cold("a-b-c|", E), cold("--b-c|", E)]);
      const moves$ = hot("---g", { g: LOST });
      expectObservable(
        resumeOnLoss(open, {
          position: (e) => e,
          isLoss,
          windowMs: 1000,
          moves$,
          onResume: (lost, downMs) => resumes.push({ lost, downMs }),
        }),
      ).toBe("a-b----c|", E);
    });
    deepStrictEqual(resumes, [{ lost: LOST, downMs: 0 }]);
  });

  it("leaves a reopen waiting for its retry alone when asked to move", () => {
    let afters: (StreamPosition | undefined)[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const made = calls([cold("a#", E, LOST), cold("b|", E)]);
      afters = made.afters;
      const moves$ = hot("----m", { m: undefined });
      expectObservable(resumeOnLoss(made.open, { position: (e) => e, isLoss, windowMs: 1000, moves$ })).toBe(
        "a 100ms b|",
        E,
      );
    });
    deepStrictEqual(afters, [undefined, E.a]);
  });
});
