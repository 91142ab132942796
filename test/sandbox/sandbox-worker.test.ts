import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import type { AllocatePartyResponse__Output } from "../../src/proto/ledger-api-types.js";
import { startSandboxWorker } from "../../src/sandbox/sandbox-worker.js";
import { SERVICES, serviceClient } from "./sandbox-client.js";

describe("sandbox in a worker thread", () => {
  it("starts on an ephemeral port, answers gRPC calls and stops", async () => {
    const sandbox = await startSandboxWorker({ port: 0, participantName: "embedded" });
    ok(sandbox.port > 0);
    const parties = serviceClient(sandbox.port, SERVICES.parties);
    try {
      const { participantId } = await parties.GetParticipantId!({});
      strictEqual((participantId as string).split("::")[0], "embedded");
      const allocated = await parties.AllocateParty!<AllocatePartyResponse__Output>({
        partyIdHint: "WorkerAlice",
      });
      deepStrictEqual(allocated.partyDetails?.isLocal, true);
    } finally {
      parties.close();
      await sandbox.stop();
    }
  });
});
