import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AllocatePartyResponse__Output } from "../../src/proto/ledger-api-types.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { rejection, SERVICES, serviceClient } from "./sandbox-client.js";

describe("sandbox StateService", () => {
  let sandbox: RunningSandbox;
  let state: ReturnType<typeof serviceClient>;
  let parties: ReturnType<typeof serviceClient>;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    state = serviceClient(sandbox.port, SERVICES.state);
    parties = serviceClient(sandbox.port, SERVICES.parties);
  });
  after(async () => {
    state.close();
    parties.close();
    await sandbox.stop();
  });

  const synchronizer = () => sandbox.store.synchronizers[0]!;

  it("starts at ledger end 0 and moves one offset per party allocation (a topology transaction)", async () => {
    deepStrictEqual(await state.GetLedgerEnd!({}), { offset: "0" });
    await parties.AllocateParty!({ partyIdHint: "ledgerEndAlice" });
    await parties.AllocateParty!({ partyIdHint: "ledgerEndBob" });
    deepStrictEqual(await state.GetLedgerEnd!({}), { offset: "2" });
  });

  it("reports nothing pruned", async () => {
    deepStrictEqual(await state.GetLatestPrunedOffsets!({}), {
      participantPrunedUpToInclusive: "0",
      allDivulgedContractsPrunedUpToInclusive: "0",
    });
  });

  it("lists the connected synchronizer without permission when no party is given", async () => {
    const response = await state.GetConnectedSynchronizers!({});
    match(synchronizer().id, /^synchronizer-1::1220[0-9a-f]{64}$/);
    deepStrictEqual(response.connectedSynchronizers, [
      {
        synchronizerAlias: "synchronizer-1",
        synchronizerId: synchronizer().id,
        permission: "PARTICIPANT_PERMISSION_UNSPECIFIED",
      },
    ]);
  });

  it("gives submission permission for a local party", async () => {
    const allocated = await parties.AllocateParty!<AllocatePartyResponse__Output>({
      partyIdHint: "hostedCarol",
    });
    const party = allocated.partyDetails?.party ?? "";
    const response = await state.GetConnectedSynchronizers!({ party });
    deepStrictEqual(response.connectedSynchronizers, [
      {
        synchronizerAlias: "synchronizer-1",
        synchronizerId: synchronizer().id,
        permission: "PARTICIPANT_PERMISSION_SUBMISSION",
      },
    ]);
  });

  it("gives an empty list for a party this participant does not host", async () => {
    const response = await state.GetConnectedSynchronizers!({ party: `nobody::1220${"ab".repeat(32)}` });
    deepStrictEqual(response.connectedSynchronizers, []);
  });

  it("rejects a malformed party with INVALID_FIELD", async () => {
    const error = await rejection(state.GetConnectedSynchronizers!({ party: "bad/party" }));
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(error.status.errorInfos[0]?.reason, "INVALID_FIELD");
    match(
      error.details,
      /^INVALID_FIELD\(8,[0-9a-f]{8}\): The submitted command has a field with invalid value: Invalid field party: non expected character 0x2f/,
    );
  });

  it("rejects a malformed participant id with INVALID_FIELD", async () => {
    const error = await rejection(
      state.GetConnectedSynchronizers!({ participantId: "participant-without-namespace" }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "INVALID_FIELD");
    match(
      error.details,
      /Invalid field participant_id: Invalid unique identifier `participant-without-namespace` with missing namespace\./,
    );
  });
});
