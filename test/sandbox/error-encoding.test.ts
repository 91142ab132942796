import { match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { rejection, serviceClient } from "./sandbox-client.js";

const STATE = "com.daml.ledger.api.v2.StateService";

/**
 * An error message that quotes a request value is cut at Canton's 512 characters; cut in the
 * middle of a surrogate pair (or quoting a lone surrogate), grpc-js could not percent-encode it
 * into the grpc-message trailer and threw outside every handler: the process died.
 */
describe("sandbox error messages are always sendable", () => {
  let sandbox: RunningSandbox;
  let state: ReturnType<typeof serviceClient>;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    state = serviceClient(sandbox.port, STATE);
  });
  after(async () => {
    state.close();
    await sandbox.stop();
  });

  for (const [label, participantId] of [
    ["1000 astral characters (surrogate pairs)", "\u{1D54F}".repeat(1000)],
    ["lone surrogates", `a\ud800b${"\udc00".repeat(10)}`],
  ] as const) {
    it(`answers a participant id of ${label} with INVALID_FIELD and keeps serving`, async () => {
      const error = await rejection(state.GetConnectedSynchronizers!({ participantId }));
      strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
      match(
        error.details,
        /^INVALID_FIELD\(8,[0-9a-f]{8}\): The submitted command has a field with invalid value/,
      );
      strictEqual(/[\ud800-\udfff]/u.test(error.details), false);
      const connected = await state.GetConnectedSynchronizers!<{ connectedSynchronizers: unknown[] }>({});
      strictEqual(connected.connectedSynchronizers.length, 2);
    });
  }
});
