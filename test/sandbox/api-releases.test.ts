import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { status } from "@grpc/grpc-js";
import type { ApiVersion } from "../../src/proto/api-version.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { rejection, serviceClient } from "./sandbox-client.js";

const V2 = "com.daml.ledger.api.v2";

/** The gRPC status code of a call's failure; plain UNIMPLEMENTED carries no Canton details. */
async function codeOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    return (error as { code: number }).code;
  }
  return status.OK;
}

/** One probe per method that not every release has, each with a request that is valid enough. */
const probes = {
  getUpdateByHash: (port: number) =>
    serviceClient(port, `${V2}.UpdateService`).GetUpdateByHash!({
      transactionHash: Buffer.from("00", "hex"),
    }),
  getCompletionByHash: (port: number) =>
    serviceClient(port, `${V2}.CommandCompletionService`).GetCompletionByHash!({
      transactionHash: Buffer.from("00", "hex"),
    }),
  getJwks: (port: number) =>
    serviceClient(port, `${V2}.JoseService`).GetJwks!({ synchronizerId: "", partyId: "" }),
  addPartyWithAcs: (port: number) =>
    serviceClient(port, `${V2}.admin.PartyManagementAlphaService`).AddPartyWithAcs!({}),
  getPreferredPackageVersion: (port: number) =>
    serviceClient(port, `${V2}.interactive.InteractiveSubmissionService`).GetPreferredPackageVersion!({
      parties: [],
      packageName: "gateway-samples",
    }),
};

function sandboxOf(apiVersion: ApiVersion) {
  const holder: { sandbox?: RunningSandbox } = {};
  before(async () => {
    holder.sandbox = await startSandbox({ port: 0, apiVersion });
  });
  after(() => holder.sandbox?.stop());
  return () => holder.sandbox!.port;
}

describe("sandbox as a Canton 3.5 participant (3.5.10)", () => {
  const port = sandboxOf("3.5.10");

  it("has none of 3.6's methods: UNIMPLEMENTED, as a 3.5 participant answers a method it lacks", async () => {
    assert.equal(await codeOf(probes.getUpdateByHash(port())), status.UNIMPLEMENTED);
    assert.equal(await codeOf(probes.getCompletionByHash(port())), status.UNIMPLEMENTED);
    assert.equal(await codeOf(probes.getJwks(port())), status.UNIMPLEMENTED);
    assert.equal(await codeOf(probes.addPartyWithAcs(port())), status.UNIMPLEMENTED);
  });

  it("still serves GetPreferredPackageVersion, which 3.6 removed", async () => {
    assert.notEqual(await codeOf(probes.getPreferredPackageVersion(port())), status.UNIMPLEMENTED);
  });

  it("does not know the CanActAsAnyParty right: a right of no kind it knows is refused", async () => {
    const users = serviceClient(port(), `${V2}.admin.UserManagementService`);
    const refused = await rejection(
      users.CreateUser!({ user: { id: "any-actor-35" }, rights: [{ canActAsAnyParty: {} }] }),
    );
    assert.equal(refused.code, status.INVALID_ARGUMENT);
    assert.match(refused.details, /unknown kind of right/);
  });
});

describe("sandbox as a Canton 3.6 participant", () => {
  const port = sandboxOf("3.6.0");

  it("serves 3.6's new methods (answers of their own, not UNIMPLEMENTED)", async () => {
    const byHash = await rejection(probes.getUpdateByHash(port()));
    assert.equal(byHash.status.errorInfos[0]?.reason, "MISSING_FIELD", "no update format given");
    // The admin token reads as no party: refused before the lookup (Canton's MatchReadAsParties).
    const completion = await rejection(probes.getCompletionByHash(port()));
    assert.equal(completion.code, status.PERMISSION_DENIED);
    const jwks = await rejection(probes.getJwks(port()));
    assert.equal(jwks.code, status.INVALID_ARGUMENT);
  });

  it("answers the removed GetPreferredPackageVersion UNIMPLEMENTED, and the alpha party replication too", async () => {
    assert.equal(await codeOf(probes.getPreferredPackageVersion(port())), status.UNIMPLEMENTED);
    assert.equal(await codeOf(probes.addPartyWithAcs(port())), status.UNIMPLEMENTED);
  });

  it("grants CanActAsAnyParty to a participant admin's request, and lists it", async () => {
    const users = serviceClient(port(), `${V2}.admin.UserManagementService`);
    await users.CreateUser!({ user: { id: "any-actor-36" }, rights: [{ canActAsAnyParty: {} }] });
    const listed = await users.ListUserRights!<{ rights: { kind: string }[] }>({ userId: "any-actor-36" });
    assert.deepEqual(
      listed.rights.map((r) => r.kind),
      ["canActAsAnyParty"],
    );
  });
});
