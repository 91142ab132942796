import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

interface PartyDetails {
  party: string;
  isLocal: boolean;
  localMetadata?: { resourceVersion: string; annotations: Record<string, string> };
  identityProviderId: string;
}
interface JsCantonError {
  code: string;
  cause: string;
  errorCategory: number;
  grpcCodeValue: number;
}

describe("/v2/parties", () => {
  let stack: Stack;
  let alice: PartyDetails;
  before(async () => {
    stack = await startStack();
    const res = await stack.request(
      "/v2/parties",
      jsonBody("POST", { partyIdHint: "alice", localMetadata: { annotations: { team: "blue" } } }),
    );
    assert.equal(res.status, 200);
    alice = ((await res.json()) as { partyDetails: PartyDetails }).partyDetails;
  });
  after(() => stack.stop());

  it("allocates a party from a hint, with its metadata", () => {
    assert.match(alice.party, /^alice::[0-9a-f]+$/);
    assert.equal(alice.isLocal, true);
    assert.equal(alice.localMetadata?.annotations.team, "blue");
    assert.notEqual(alice.localMetadata?.resourceVersion, "");
  });

  it("refuses an invalid hint with the ledger's INVALID_ARGUMENT", async () => {
    const res = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "not valid!" }));
    assert.equal(res.status, 400);
    const body = (await res.json()) as JsCantonError;
    assert.equal(body.grpcCodeValue, 3);
    assert.equal(body.errorCategory, 8);
    assert.match(body.cause, /not valid!/);
  });

  it("refuses a second party with the same hint, as Canton does (INVALID_ARGUMENT)", async () => {
    const res = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "alice" }));
    assert.equal(res.status, 400);
    const body = (await res.json()) as JsCantonError;
    assert.equal(body.errorCategory, 8);
    assert.match(body.cause, /already/);
  });

  it("lists known parties, with paging", async () => {
    await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "bob" }));
    await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "carol" }));
    const res = await stack.request("/v2/parties");
    assert.equal(res.status, 200);
    const all = (await res.json()) as { partyDetails: PartyDetails[]; nextPageToken: string };
    const names = all.partyDetails.map((p) => p.party.split("::")[0]);
    for (const name of ["alice", "bob", "carol"]) assert.ok(names.includes(name), `${name} is not listed`);

    const first = (await (await stack.request("/v2/parties?pageSize=1")).json()) as typeof all;
    assert.equal(first.partyDetails.length, 1);
    assert.notEqual(first.nextPageToken, "");
    const second = (await (
      await stack.request(`/v2/parties?pageSize=1&pageToken=${encodeURIComponent(first.nextPageToken)}`)
    ).json()) as typeof all;
    assert.equal(second.partyDetails.length, 1);
    assert.notEqual(second.partyDetails[0]?.party, first.partyDetails[0]?.party);
  });

  it("filters the list by party", async () => {
    const res = await stack.request(`/v2/parties?filter-party=${encodeURIComponent(alice.party)}`);
    const body = (await res.json()) as { partyDetails: PartyDetails[] };
    assert.deepEqual(
      body.partyDetails.map((p) => p.party),
      [alice.party],
    );
  });

  it("gets the details of known parties only", async () => {
    const unknown = "nobody::1220aaaa";
    const res = await stack.request(
      `/v2/parties/${encodeURIComponent(alice.party)}?parties=${encodeURIComponent(unknown)}`,
    );
    assert.equal(res.status, 200);
    const body = (await res.json()) as { partyDetails: PartyDetails[] };
    assert.deepEqual(
      body.partyDetails.map((p) => p.party),
      [alice.party],
    );
  });

  it("refuses a malformed party id in the path with the ledger's 400", async () => {
    const res = await stack.request(`/v2/parties/${encodeURIComponent("bad party!")}`);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as JsCantonError).grpcCodeValue, 3);
  });

  it("reports the participant id", async () => {
    const res = await stack.request("/v2/parties/participant-id");
    assert.equal(res.status, 200);
    const body = (await res.json()) as { participantId: string };
    assert.match(body.participantId, /::[0-9a-f]+$/);
    assert.equal(alice.party.split("::")[1], body.participantId.split("::")[1]);
  });

  it("updates annotations with a field mask and bumps the resource version", async () => {
    const res = await stack.request(
      `/v2/parties/${encodeURIComponent(alice.party)}`,
      jsonBody("PATCH", {
        partyDetails: { party: alice.party, localMetadata: { annotations: { team: "red", tier: "1" } } },
        updateMask: { paths: ["local_metadata.annotations"] },
      }),
    );
    assert.equal(res.status, 200);
    const updated = ((await res.json()) as { partyDetails: PartyDetails }).partyDetails;
    assert.deepEqual(updated.localMetadata?.annotations, { team: "red", tier: "1" });
    assert.notEqual(updated.localMetadata?.resourceVersion, alice.localMetadata?.resourceVersion);
  });

  it("refuses an update with a stale resource version", async () => {
    const res = await stack.request(
      `/v2/parties/${encodeURIComponent(alice.party)}`,
      jsonBody("PATCH", {
        partyDetails: {
          party: alice.party,
          localMetadata: {
            resourceVersion: alice.localMetadata?.resourceVersion,
            annotations: { team: "green" },
          },
        },
        updateMask: { paths: ["local_metadata"] },
      }),
    );
    assert.equal(res.status, 409);
    assert.equal(((await res.json()) as JsCantonError).errorCategory, 2);
  });

  it("refuses an update whose body names another party than the path", async () => {
    const res = await stack.request(
      `/v2/parties/${encodeURIComponent(alice.party)}`,
      jsonBody("PATCH", {
        partyDetails: { party: "someone::1220" },
        updateMask: { paths: ["local_metadata"] },
      }),
    );
    assert.equal(res.status, 400);
    const body = (await res.json()) as JsCantonError;
    assert.equal(body.code, "INVALID_ARGUMENT");
    assert.match(body.cause, /does not match party in body/);
  });

  it("refuses party endpoints without a token", async () => {
    assert.equal((await stack.request("/v2/parties", { token: null })).status, 401);
    assert.equal((await stack.request("/v2/parties/participant-id", { token: null })).status, 401);
  });
});
