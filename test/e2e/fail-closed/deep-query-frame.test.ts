import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { capturingLogger } from "../../support/capturing-logger.js";
import { type Stack, startStack } from "../../support/stack.js";
import { tokenFor } from "../../support/tokens.js";
import { until } from "../../support/until.js";
import { partyFilter, updatesRequest } from "../../support/update-requests.js";
import { allocate } from "../ledger-client.js";
import { type WatchedSocket, watchedSocket } from "./watched-socket.js";

/** gRPC INVALID_ARGUMENT: the client's fault, whatever the category that carries it. */
const INVALID_ARGUMENT = 3;

/**
 * Issue 35, a finding from reading the code: a deeply nested WebSocket query frame overflows the
 * stack in the fan-out's canonical-JSON key (src/fanout/subscription-key.ts) and is answered
 * LEDGER_API_INTERNAL_ERROR, logged as a gateway fault ("stream failed in the gateway"), where it
 * is the client's invalid value. Any client can fill the error log with it.
 *
 * The fixed gateway bounds query frames as it bounds HTTP bodies (depth and size): the frame gets
 * an error frame with a client error (INVALID_ARGUMENT), and nothing is logged as a gateway fault.
 *
 * On 9c6ba21 it fails: both frames below (under the 1 MiB frame limit, otherwise valid update
 * requests) are answered LEDGER_API_INTERNAL_ERROR (gRPC INTERNAL), with an error-level
 * "stream failed in the gateway" line each (RangeError: Maximum call stack size exceeded).
 */
describe("fail closed: a deeply nested WebSocket query frame", () => {
  let stack: Stack;
  let party: string;
  const logs = capturingLogger();
  const opened: WatchedSocket[] = [];

  before(async () => {
    stack = await startStack([], {}, { gatewayLog: logs.log });
    party = await allocate(stack, "deep");
  });
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  /** A valid open-ended update request of the party's, as text, with `field` spliced in at its root. */
  const requestWith = (field: string) =>
    `${JSON.stringify(updatesRequest(partyFilter(party))).slice(0, -1)},${field}}`;
  const frames: Record<string, () => string> = {
    "200,000 nested arrays in an extra field": () => `"x":${"[".repeat(200_000)}${"]".repeat(200_000)}`,
    '150,000 nested {"a": in an extra field': () => `"x":${'{"a":'.repeat(150_000)}1${"}".repeat(150_000)}`,
  };

  for (const [name, field] of Object.entries(frames)) {
    it(`answers ${name} with a client error frame and logs no gateway fault`, async () => {
      const faultsBefore = gatewayFaults().length;
      const socket = watchedSocket(stack.url, tokenFor(`actAs-${party}`), requestWith(field()));
      opened.push(socket);
      await until(() => socket.closedWith !== undefined, { observed: () => `${socket}` });

      const [answer, ...more] = socket.frames;
      assert.deepEqual(more, [], `${socket}`);
      assert.ok(
        answer?.grpcCodeValue === INVALID_ARGUMENT && answer.code !== "LEDGER_API_INTERNAL_ERROR",
        `the frame was answered ${answer?.code} (gRPC ${answer?.grpcCodeValue}, category ${answer?.errorCategory}), not a client error: ${socket}`,
      );
      const faults = gatewayFaults().slice(faultsBefore);
      assert.deepEqual(
        faults.map((entry) => `${entry.msg}: ${(entry.err as { message?: string } | undefined)?.message}`),
        [],
        "logged as a gateway fault",
      );
    });
  }

  function gatewayFaults(): Record<string, unknown>[] {
    return logs
      .entries()
      .filter((entry) => entry.msg === "stream failed in the gateway" || (entry.level as number) >= 50);
  }
});
