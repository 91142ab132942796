import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { ElementLimitExceededError } from "../../src/errors/index.js";
import { elementLimit } from "../../src/streams/element-limit.js";
import { testScheduler } from "./marbles.js";

describe("elementLimit", () => {
  it("passes fewer than max elements and the source's completion", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b|").pipe(elementLimit(3))).toBe("a-b|");
    });
  });

  it("accepts exactly max elements", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b-c|").pipe(elementLimit(3))).toBe("a-b-c|");
    });
  });

  it("errors with ElementLimitExceededError at element max+1 and unsubscribes at once", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d-e|");
      expectObservable(source.pipe(elementLimit(3))).toBe(
        "a-b-c-#",
        undefined,
        new ElementLimitExceededError(4, 3),
      );
      expectSubscriptions(source.subscriptions).toBe("^-----!");
    });
  });

  it("treats a limit above max as max (413 past max)", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b-c|").pipe(elementLimit(2, 10))).toBe(
        "a-b-#",
        undefined,
        new ElementLimitExceededError(3, 2),
      );
    });
  });

  it("truncates to limit when limit <= max and completes without error", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d|");
      expectObservable(source.pipe(elementLimit(5, 2))).toBe("a-(b|)");
      expectSubscriptions(source.subscriptions).toBe("^-!");
    });
  });

  it("truncates when limit equals max", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b-c|").pipe(elementLimit(2, 2))).toBe("a-(b|)");
    });
  });

  it("reads up to the first element for limit 0 and passes none: the source says something first", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("--a-b|");
      expectObservable(source.pipe(elementLimit(3, 0))).toBe("--|");
      expectSubscriptions(source.subscriptions).toBe("^-!");
    });
  });

  it("passes on the source's end or error for limit 0", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("---|").pipe(elementLimit(3, 0))).toBe("---|");
      expectObservable(cold("--#", undefined, new Error("refused")).pipe(elementLimit(3, 0))).toBe(
        "--#",
        undefined,
        new Error("refused"),
      );
    });
  });

  it("errors on the first element when max is 0", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("-a|").pipe(elementLimit(0))).toBe(
        "-#",
        undefined,
        new ElementLimitExceededError(1, 0),
      );
    });
  });

  it("carries Canton's 413 cause text and its numbers", () => {
    const err = new ElementLimitExceededError(1025, 1024);
    deepStrictEqual(
      { message: err.message, count: err.count, max: err.max, reason: err.reason },
      {
        message: "The number of matching elements (1025) is greater than the node limit (1024).",
        count: 1025,
        max: 1024,
        reason: "element_limit",
      },
    );
  });

  it("rejects a negative or fractional max or limit", () => {
    throws(() => elementLimit(-1), RangeError);
    throws(() => elementLimit(2, 1.5), RangeError);
  });
});
