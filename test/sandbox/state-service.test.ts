import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AllocatePartyResponse__Output } from "../../src/proto/ledger-api-types.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, rejection, SERVICES, serviceClient, token } from "./sandbox-client.js";

type Connected = { connectedSynchronizers: { synchronizerAlias: string }[] };

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
  const second = () => sandbox.store.synchronizers[1]!;

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

  it("lists both connected synchronizers without permission when no party is given", async () => {
    const response = await state.GetConnectedSynchronizers!({});
    match(synchronizer().id, /^synchronizer-1::1220[0-9a-f]{64}$/);
    match(second().id, /^synchronizer-2::1220[0-9a-f]{64}$/);
    deepStrictEqual(response.connectedSynchronizers, [
      {
        synchronizerAlias: "synchronizer-1",
        synchronizerId: synchronizer().id,
        permission: "PARTICIPANT_PERMISSION_UNSPECIFIED",
      },
      {
        synchronizerAlias: "synchronizer-2",
        synchronizerId: second().id,
        permission: "PARTICIPANT_PERMISSION_UNSPECIFIED",
      },
    ]);
  });

  it("gives submission permission on both synchronizers for a party allocated without a synchronizer", async () => {
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
      {
        synchronizerAlias: "synchronizer-2",
        synchronizerId: second().id,
        permission: "PARTICIPANT_PERMISSION_SUBMISSION",
      },
    ]);
  });

  it("lists only the synchronizer a party was allocated on, then both once it is allocated on the other", async () => {
    const allocated = await parties.AllocateParty!<AllocatePartyResponse__Output>({
      partyIdHint: "hostedDave",
      synchronizerId: second().id,
    });
    const party = allocated.partyDetails?.party ?? "";
    const only = await state.GetConnectedSynchronizers!({ party });
    deepStrictEqual(only.connectedSynchronizers, [
      {
        synchronizerAlias: "synchronizer-2",
        synchronizerId: second().id,
        permission: "PARTICIPANT_PERMISSION_SUBMISSION",
      },
    ]);
    const users = serviceClient(sandbox.port, "com.daml.ledger.api.v2.admin.UserManagementService");
    await users.CreateUser!({ user: { id: "dave-app" }, rights: [] });
    await parties.AllocateParty!({
      partyIdHint: "hostedDave",
      synchronizerId: synchronizer().id,
      userId: "dave-app",
    });
    const rights = await users.ListUserRights!<{ rights: { canActAs?: { party: string } }[] }>({
      userId: "dave-app",
    });
    users.close();
    deepStrictEqual(
      rights.rights.map((r) => r.canActAs?.party),
      [party],
      "the user named in the allocation may act as the party",
    );
    const both = await state.GetConnectedSynchronizers!<Connected>({ party });
    deepStrictEqual(
      both.connectedSynchronizers.map((s) => s.synchronizerAlias),
      ["synchronizer-1", "synchronizer-2"],
    );
    const again = await rejection(
      parties.AllocateParty!({ partyIdHint: "hostedDave", synchronizerId: synchronizer().id }),
    );
    match(again.details, /Party already exists/);
  });

  it("filters by participant: this participant's hostings, none for another participant", async () => {
    const allocated = await parties.AllocateParty!<AllocatePartyResponse__Output>({
      partyIdHint: "hostedErin",
    });
    const party = allocated.partyDetails?.party ?? "";
    const here = await state.GetConnectedSynchronizers!<Connected>({
      party,
      participantId: sandbox.store.participant.participantId,
    });
    strictEqual(here.connectedSynchronizers.length, 2);
    const elsewhere = await state.GetConnectedSynchronizers!({
      party,
      participantId: `other::1220${"cd".repeat(32)}`,
    });
    deepStrictEqual(elsewhere.connectedSynchronizers, []);
  });

  it("prunes only for an admin (ParticipantPruningService over admin gRPC)", async () => {
    const users = serviceClient(sandbox.port, "com.daml.ledger.api.v2.admin.UserManagementService");
    const pruning = serviceClient(sandbox.port, "com.daml.ledger.api.v2.admin.ParticipantPruningService");
    try {
      await users.CreateUser!({ user: { id: "not-an-admin" }, rights: [] });
      const refused = await rejection(pruning.Prune!({ pruneUpTo: "1" }, bearer(token("not-an-admin"))));
      strictEqual(refused.code, grpc.status.PERMISSION_DENIED);
      const past = await rejection(pruning.Prune!({ pruneUpTo: "1000000" }));
      strictEqual(past.status.errorInfos[0]?.reason, "OFFSET_AFTER_LEDGER_END");
      deepStrictEqual(await state.GetLatestPrunedOffsets!({}), {
        participantPrunedUpToInclusive: "0",
        allDivulgedContractsPrunedUpToInclusive: "0",
      });
    } finally {
      users.close();
      pruning.close();
    }
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
