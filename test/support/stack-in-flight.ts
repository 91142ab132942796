import assert from "node:assert/strict";
import { after, before } from "node:test";
import { type Stack, startStack } from "./stack.js";

/**
 * A stack started with `args` for the enclosing suite, and its HTTP in-flight gauge read every
 * 20 ms (what the tests wait on: a request is in flight, or no longer).
 */
export function stackWithInFlight(args: string[]): { stack: () => Stack; inFlight: () => number } {
  let stack: Stack;
  let inFlight = 0;
  let poller: NodeJS.Timeout;
  before(async () => {
    stack = await startStack(args);
    const gauge = stack.gateway.metrics?.httpInFlight;
    assert.ok(gauge);
    poller = setInterval(() => {
      void gauge.get().then(({ values }) => {
        inFlight = values[0]?.value ?? 0;
      });
    }, 20);
  });
  after(async () => {
    clearInterval(poller);
    await stack.stop();
  });
  return { stack: () => stack, inFlight: () => inFlight };
}
