import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { errorFrame } from "../../src/streams/error-frame.js";
import { testScheduler } from "./marbles.js";

describe("errorFrame", () => {
  it("turns an error into one final frame followed by completion", () => {
    const seen: unknown[] = [];
    const boom = new Error("boom");
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-#", undefined, boom);
      const toFrame = (err: unknown) => {
        seen.push(err);
        return "E";
      };
      expectObservable(source.pipe(errorFrame(toFrame))).toBe("a-b-(E|)");
      expectSubscriptions(source.subscriptions).toBe("^---!");
    });
    deepStrictEqual(seen, [boom]);
  });

  it("leaves a completing stream untouched and never calls toFrame", () => {
    let calls = 0;
    testScheduler().run(({ cold, expectObservable }) => {
      const toFrame = () => {
        calls += 1;
        return "E";
      };
      expectObservable(cold("a-b|").pipe(errorFrame(toFrame))).toBe("a-b|");
    });
    deepStrictEqual(calls, 0);
  });

  it("surfaces a failure of toFrame itself as the stream's error", () => {
    const broken = new Error("mapping failed");
    testScheduler().run(({ cold, expectObservable }) => {
      const toFrame = (): string => {
        throw broken;
      };
      expectObservable(cold("a#").pipe(errorFrame(toFrame))).toBe("a#", undefined, broken);
    });
  });
});
