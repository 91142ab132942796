import { deepStrictEqual } from "node:assert/strict";
import { TestScheduler } from "rxjs/testing";

/** A TestScheduler whose frame comparisons use node:assert, so failures show a structural diff. */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => deepStrictEqual(actual, expected));
}
