import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

describe("/v2/version and /v2/state", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it("reports the 3.5 API level and the feature descriptor", async () => {
    const res = await stack.request("/v2/version");
    assert.equal(res.status, 200);
    const body = (await res.json()) as { version: string; features: Record<string, unknown> };
    assert.match(body.version, /^3\.5\./);
    for (const feature of [
      "experimental",
      "userManagement",
      "partyManagement",
      "offsetCheckpoint",
      "packageFeature",
    ]) {
      assert.ok(feature in body.features, `features.${feature} is missing`);
    }
    const userManagement = body.features.userManagement as { supported: boolean };
    assert.equal(userManagement.supported, true);
    const checkpoint = body.features.offsetCheckpoint as {
      maxOffsetCheckpointEmissionDelay: { seconds: number };
    };
    assert.equal(typeof checkpoint.maxOffsetCheckpointEmissionDelay.seconds, "number");
  });

  it("answers /v2/version without a token, as a participant serves GetLedgerApiVersion to anyone", async () => {
    const res = await stack.request("/v2/version", { token: null });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { version: string }).version, "3.5.10");
  });

  it("refuses /v2/state/ledger-end without a token", async () => {
    assert.equal((await stack.request("/v2/state/ledger-end", { token: null })).status, 401);
  });

  it("reports the ledger end as a JSON number", async () => {
    const res = await stack.request("/v2/state/ledger-end");
    assert.equal(res.status, 200);
    const body = (await res.json()) as { offset: number };
    assert.equal(typeof body.offset, "number");
    assert.ok(body.offset >= 0);
  });

  it("reports that nothing was pruned yet", async () => {
    const res = await stack.request("/v2/state/latest-pruned-offsets");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      participantPrunedUpToInclusive: 0,
      allDivulgedContractsPrunedUpToInclusive: 0,
    });
  });

  it("lists the connected synchronizers, with the permission of a hosted party", async () => {
    const all = await stack.request("/v2/state/connected-synchronizers");
    assert.equal(all.status, 200);
    const { connectedSynchronizers } = (await all.json()) as {
      connectedSynchronizers: { synchronizerAlias: string; synchronizerId: string; permission: string }[];
    };
    assert.ok(connectedSynchronizers.length >= 1);
    assert.match(connectedSynchronizers[0]?.synchronizerId ?? "", /^[^:]+::[0-9a-f]+$/);

    const allocated = await stack.request(
      "/v2/parties",
      jsonBody("POST", { partyIdHint: `sync-${Date.now()}` }),
    );
    const { partyDetails } = (await allocated.json()) as { partyDetails: { party: string } };
    const forParty = await stack.request(
      `/v2/state/connected-synchronizers?party=${encodeURIComponent(partyDetails.party)}`,
    );
    assert.equal(forParty.status, 200);
    const hosted = (await forParty.json()) as { connectedSynchronizers: { permission: string }[] };
    assert.equal(hosted.connectedSynchronizers[0]?.permission, "PARTICIPANT_PERMISSION_SUBMISSION");
  });

  it("passes the ledger's error through for a malformed party", async () => {
    const res = await stack.request("/v2/state/connected-synchronizers?party=not%20a%20party%20id%21");
    assert.equal(res.status, 400);
    const body = (await res.json()) as { code: string; errorCategory: number; grpcCodeValue: number };
    assert.equal(body.errorCategory, 8);
    assert.equal(body.grpcCodeValue, 3);
  });
});
