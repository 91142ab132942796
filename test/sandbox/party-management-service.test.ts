import { deepStrictEqual, match, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AllocatePartyResponse__Output } from "../../src/proto/ledger-api-types.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { rejection, SERVICES, serviceClient } from "./sandbox-client.js";

interface PartyDetails {
  party: string;
  isLocal: boolean;
  localMetadata: { resourceVersion: string; annotations: Record<string, string> };
  identityProviderId: string;
}

describe("sandbox PartyManagementService", () => {
  let sandbox: RunningSandbox;
  let parties: ReturnType<typeof serviceClient>;
  let fingerprint: string;
  before(async () => {
    sandbox = await startSandbox({ port: 0, participantName: "participant1" });
    parties = serviceClient(sandbox.port, SERVICES.parties);
    fingerprint = sandbox.store.participant.fingerprint;
  });
  after(async () => {
    parties.close();
    await sandbox.stop();
  });

  const allocate = async (request: object) => {
    const { partyDetails } = await parties.AllocateParty!<AllocatePartyResponse__Output>(request);
    if (partyDetails === null) throw new Error("AllocateParty answered without party details");
    return partyDetails;
  };

  describe("GetParticipantId", () => {
    it("returns <name>::<namespace fingerprint>", async () => {
      const response = await parties.GetParticipantId!({});
      match(response.participantId as string, /^participant1::1220[0-9a-f]{64}$/);
      strictEqual(response.participantId, `participant1::${fingerprint}`);
    });
  });

  describe("AllocateParty", () => {
    it("allocates <hint>::<participant namespace> with its annotations at resource version 0", async () => {
      const details = await allocate({
        partyIdHint: "Alice",
        localMetadata: { annotations: { "example.com/team": "blue" } },
      });
      deepStrictEqual(details, {
        party: `Alice::${fingerprint}`,
        isLocal: true,
        localMetadata: { resourceVersion: "0", annotations: { "example.com/team": "blue" } },
        identityProviderId: "",
      });
    });

    it("generates a party-<uuid> name when the hint is empty", async () => {
      const details = await allocate({});
      match(details.party, new RegExp(`^party-[0-9a-f-]{36}::${fingerprint}$`));
    });

    it("rejects a hint with a character outside the party alphabet (INVALID_ARGUMENT)", async () => {
      const error = await rejection(parties.AllocateParty!({ partyIdHint: "Alice!" }));
      strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
      strictEqual(error.status.errorInfos[0]?.reason, "INVALID_ARGUMENT");
      strictEqual(error.status.errorInfos[0]?.metadata.category, "8");
      match(
        error.details,
        /: The submitted request has invalid arguments: non expected character 0x21 in Daml-LF Party "Alice!"$/,
      );
    });

    it("rejects a hint longer than 255 characters and a hint containing the `::` delimiter", async () => {
      const long = await rejection(parties.AllocateParty!({ partyIdHint: "a".repeat(256) }));
      match(long.details, /Daml-LF Party is too long \(max: 255\)$/);
      const delimited = await rejection(parties.AllocateParty!({ partyIdHint: "a::b" }));
      match(
        delimited.details,
        /invalid arguments: Invalid party ID: String contains reserved delimiter `::`\.$/,
      );
    });

    it("rejects a resource version and empty annotation values on allocation", async () => {
      const version = await rejection(
        parties.AllocateParty!({ partyIdHint: "V", localMetadata: { resourceVersion: "1" } }),
      );
      match(version.details, /field local_metadata\.resource_version must be not set$/);
      const empty = await rejection(
        parties.AllocateParty!({ partyIdHint: "E", localMetadata: { annotations: { k: "" } } }),
      );
      match(empty.details, /The value of an annotation is empty for key: 'k'$/);
    });

    it("rejects an allocation of an existing party, correlated by the allocation's submission id", async () => {
      await allocate({ partyIdHint: "Twice" });
      const error = await rejection(parties.AllocateParty!({ partyIdHint: "Twice" }));
      strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
      match(
        error.details,
        new RegExp(
          `^INVALID_ARGUMENT\\(8,1220[0-9a-f]{4}\\): The submitted request has invalid arguments: Party already exists: party Twice::${fingerprint} is already allocated on this node$`,
        ),
      );
      match(error.status.requestInfos[0]!.requestId, /^1220[0-9a-f]{64}$/);
      notStrictEqual(error.status.requestInfos[0]!.requestId, error.status.errorInfos[0]!.metadata.tid);
    });

    it("rejects an unknown identity provider and an unknown synchronizer", async () => {
      const idp = await rejection(parties.AllocateParty!({ partyIdHint: "I", identityProviderId: "idp1" }));
      match(idp.details, /Provided identity_provider_id Id\(idp1\) has not been found\.$/);
      const sync = await rejection(
        parties.AllocateParty!({ partyIdHint: "S", synchronizerId: `other::1220${"00".repeat(32)}` }),
      );
      strictEqual(sync.code, grpc.status.FAILED_PRECONDITION);
      strictEqual(sync.status.errorInfos[0]?.reason, "NOT_CONNECTED_TO_SYNCHRONIZER");
    });
  });

  describe("GetParties", () => {
    it("returns only known parties", async () => {
      const bob = await allocate({ partyIdHint: "GetBob" });
      const response = await parties.GetParties!({ parties: [bob.party, `Unknown::${fingerprint}`] });
      deepStrictEqual(response.partyDetails, [bob]);
    });

    it("shows the local metadata to the party's own (default) identity provider", async () => {
      const bob = await allocate({ partyIdHint: "BlindBob", localMetadata: { annotations: { a: "1" } } });
      const response = await parties.GetParties!({ parties: [bob.party] });
      deepStrictEqual((response.partyDetails as PartyDetails[])[0]?.localMetadata.annotations, { a: "1" });
    });
  });

  describe("ListKnownParties", () => {
    it("pages in party order with Canton's page token and filters by prefix", async () => {
      for (const hint of ["pageC", "pageA", "pageB"]) await allocate({ partyIdHint: hint });
      const first = await parties.ListKnownParties!({ pageSize: 2, filterParty: "page" });
      deepStrictEqual(
        (first.partyDetails as PartyDetails[]).map((p) => p.party),
        [`pageA::${fingerprint}`, `pageB::${fingerprint}`],
      );
      const token = first.nextPageToken as string;
      // base64url of the protobuf payload { 1: "pageB::<fingerprint>" }, with padding.
      strictEqual(Buffer.from(token, "base64url").subarray(2).toString(), `pageB::${fingerprint}`);
      const second = await parties.ListKnownParties!({ pageSize: 2, filterParty: "page", pageToken: token });
      deepStrictEqual(
        (second.partyDetails as PartyDetails[]).map((p) => p.party),
        [`pageC::${fingerprint}`],
      );
      strictEqual(second.nextPageToken, "");
    });

    it("returns every party with the server's page size when none is given", async () => {
      const response = await parties.ListKnownParties!({});
      const listed = (response.partyDetails as PartyDetails[]).map((p) => p.party);
      ok(listed.includes(`Alice::${fingerprint}`));
      deepStrictEqual(listed, [...listed].sort());
      strictEqual(response.nextPageToken, "");
    });

    it("rejects a negative or oversized page size and a garbage page token", async () => {
      match(
        (await rejection(parties.ListKnownParties!({ pageSize: -1 }))).details,
        /Page size must be non-negative$/,
      );
      match(
        (await rejection(parties.ListKnownParties!({ pageSize: 10001 }))).details,
        /Page size must not exceed the server's maximum of 10000$/,
      );
      match(
        (await rejection(parties.ListKnownParties!({ pageToken: "%%%" }))).details,
        /invalid arguments: Invalid page token$/,
      );
    });
  });

  describe("UpdatePartyDetails", () => {
    const update = (partyDetails: object, paths: string[]) =>
      parties.UpdatePartyDetails!({ partyDetails, updateMask: { paths } }) as Promise<{
        partyDetails: PartyDetails;
      }>;

    it("merges annotations, removes keys updated to an empty value and bumps the resource version", async () => {
      const carol = await allocate({
        partyIdHint: "UpdCarol",
        localMetadata: { annotations: { keep: "1", drop: "2" } },
      });
      const { partyDetails } = await update(
        {
          party: carol.party,
          localMetadata: { resourceVersion: "0", annotations: { drop: "", added: "3" } },
        },
        ["local_metadata.annotations"],
      );
      deepStrictEqual(partyDetails.localMetadata, {
        resourceVersion: "1",
        annotations: { keep: "1", added: "3" },
      });
    });

    it("rejects a stale resource version with CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED (ABORTED, retryable)", async () => {
      const dave = await allocate({ partyIdHint: "UpdDave" });
      await update({ party: dave.party, localMetadata: { annotations: { a: "1" } } }, ["local_metadata"]);
      const error = await rejection(
        update({ party: dave.party, localMetadata: { resourceVersion: "0", annotations: { a: "2" } } }, [
          "local_metadata",
        ]),
      );
      strictEqual(error.code, grpc.status.ABORTED);
      strictEqual(error.status.errorInfos[0]?.reason, "CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED");
      strictEqual(error.status.errorInfos[0]?.metadata.category, "2");
      deepStrictEqual(error.status.retryInfos, [{ retryDelaySeconds: 1 }]);
      deepStrictEqual(error.status.resourceInfos, [
        { resourceType: "PARTY", resourceName: dave.party, owner: "", description: "" },
      ]);
      match(
        error.details,
        /Update operation for party 'UpdDave::[0-9a-f]+' failed due to a concurrent update to the same party$/,
      );
    });

    it("rejects an unknown party with PARTY_NOT_FOUND (NOT_FOUND, resource PARTY)", async () => {
      const party = `Ghost::${fingerprint}`;
      const error = await rejection(
        update({ party, localMetadata: { annotations: { a: "1" } } }, ["local_metadata.annotations"]),
      );
      strictEqual(error.code, grpc.status.NOT_FOUND);
      strictEqual(error.status.errorInfos[0]?.reason, "PARTY_NOT_FOUND");
      strictEqual(error.status.errorInfos[0]?.metadata.category, "11");
      deepStrictEqual(
        error.status.resourceInfos.map((r) => [r.resourceType, r.resourceName]),
        [["PARTY", party]],
      );
      match(error.details, new RegExp(`Party: '${party}' was not found when updating a party record$`));
    });

    it("rejects bad masks and an attempt to change is_local", async () => {
      const erin = await allocate({ partyIdHint: "UpdErin" });
      const empty = await rejection(update({ party: erin.party }, []));
      strictEqual(empty.status.errorInfos[0]?.reason, "INVALID_PARTY_DETAILS_UPDATE_REQUEST");
      match(empty.details, /failed due to: The update mask contains no entries$/);
      match(
        (await rejection(update({ party: erin.party }, ["bogus"]))).details,
        /The update path: 'bogus' points to an unknown field\.$/,
      );
      match(
        (await rejection(update({ party: erin.party }, ["is_local", "is_local"]))).details,
        /The update path: 'is_local' is duplicated\.$/,
      );
      match(
        (await rejection(update({ party: erin.party, isLocal: false }, ["is_local"]))).details,
        /attempted to modify not-modifiable 'is_local' attribute$/,
      );
    });

    it("requires party_details and update_mask (MISSING_FIELD with field_name)", async () => {
      const error = await rejection(parties.UpdatePartyDetails!({}));
      strictEqual(error.status.errorInfos[0]?.reason, "MISSING_FIELD");
      strictEqual(error.status.errorInfos[0]?.metadata.field_name, "party_details");
      const mask = await rejection(
        parties.UpdatePartyDetails!({ partyDetails: { party: `Alice::${fingerprint}` } }),
      );
      strictEqual(mask.status.errorInfos[0]?.metadata.field_name, "update_mask");
    });

    it("leaves annotations alone when only the parent path is given with none", async () => {
      const frank = await allocate({ partyIdHint: "UpdFrank", localMetadata: { annotations: { x: "1" } } });
      const { partyDetails } = await update({ party: frank.party }, ["local_metadata"]);
      deepStrictEqual(partyDetails.localMetadata, { resourceVersion: "1", annotations: { x: "1" } });
    });
  });

  describe("UpdatePartyIdentityProviderId", () => {
    it("accepts default -> default for a known party and rejects an unknown one", async () => {
      const gina = await allocate({ partyIdHint: "IdpGina" });
      deepStrictEqual(await parties.UpdatePartyIdentityProviderId!({ party: gina.party }), {});
      const error = await rejection(
        parties.UpdatePartyIdentityProviderId!({ party: `Nobody::${fingerprint}` }),
      );
      strictEqual(error.status.errorInfos[0]?.reason, "PARTY_NOT_FOUND");
    });
  });
});
