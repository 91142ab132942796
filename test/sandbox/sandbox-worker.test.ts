import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import type { AllocatePartyResponse__Output } from "../../src/proto/ledger-api-types.js";
import { startSandboxWorker, unaskedEnd } from "../../src/sandbox/sandbox-worker.js";
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

  it("reports an end it was not asked for (the CLI then exits instead of answering 503 for ever), not a stop", async () => {
    const crashing = new Worker("setTimeout(() => { throw new Error('ledger thread died'); }, 10);", {
      eval: true,
    });
    strictEqual((await unaskedEnd(crashing, () => false)).message, "ledger thread died");

    const sandbox = await startSandboxWorker({ port: 0 });
    let ended = false;
    void sandbox.ended.then(() => {
      ended = true;
    });
    await sandbox.stop();
    await new Promise((resolve) => setImmediate(resolve));
    strictEqual(ended, false);
  });
});
