import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { take } from "rxjs";
import { ElementLimitExceededError, IdleTimeoutError } from "../../src/errors/index.js";
import { elementLimit } from "../../src/streams/element-limit.js";
import { type StreamEnd, streamEnd } from "../../src/streams/stream-end.js";
import { testScheduler } from "./marbles.js";

function summary(ends: StreamEnd[]) {
  return ends.map(({ reason, elements }) => ({ reason, elements }));
}

describe("streamEnd", () => {
  it("reports completion with the element count", () => {
    const ends: StreamEnd[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b|").pipe(streamEnd((e) => ends.push(e)))).toBe("a-b|");
    });
    deepStrictEqual(summary(ends), [{ reason: "completed", elements: 2 }]);
  });

  it("reports the policy reason of a typed error and a generic one otherwise", () => {
    const ends: StreamEnd[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const onEnd = (e: StreamEnd) => ends.push(e);
      const idle = new IdleTimeoutError(2, 1);
      expectObservable(cold("a-#", undefined, idle).pipe(streamEnd(onEnd))).toBe("a-#", undefined, idle);
      expectObservable(cold("a-b-c|").pipe(elementLimit(1), streamEnd(onEnd))).toBe(
        "a-#",
        undefined,
        new ElementLimitExceededError(2, 1),
      );
      expectObservable(cold("a-#").pipe(streamEnd(onEnd))).toBe("a-#");
    });
    // The three streams end in the same virtual frame, so compare regardless of order.
    deepStrictEqual(
      summary(ends).sort((a, b) => a.reason.localeCompare(b.reason)),
      [
        { reason: "element_limit", elements: 1 },
        { reason: "error", elements: 1 },
        { reason: "idle", elements: 1 },
      ],
    );
  });

  it("reports unsubscribed when the consumer leaves first", () => {
    const ends: StreamEnd[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("a-b-c-d|").pipe(
          streamEnd((e) => ends.push(e)),
          take(2),
        ),
      ).toBe("a-(b|)");
    });
    deepStrictEqual(summary(ends), [{ reason: "unsubscribed", elements: 2 }]);
  });
});
