import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { signToken } from "../jwt/test-tokens.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

type Json = Record<string, unknown>;

describe("users over HTTP (UserManagementService)", () => {
  let stack: Stack;
  let party: string;
  const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const response = await stack.request(path, init);
    const text = await response.text();
    return { status: response.status, body: (text === "" ? {} : JSON.parse(text)) as Json };
  };
  before(async () => {
    stack = await startStack();
    const allocated = await call("/v2/parties", jsonBody("POST", { partyIdHint: "ursula" }));
    party = (allocated.body.partyDetails as Json).party as string;
  });
  after(() => stack.stop());

  it("starts with the bootstrap participant_admin holding ParticipantAdmin", async () => {
    const rights = await call("/v2/users/participant_admin/rights");
    deepStrictEqual(rights.body, { rights: [{ kind: { ParticipantAdmin: { value: {} } } }] });
  });

  it("creates a user from its id alone, and with rights", async () => {
    const bare = await call("/v2/users", jsonBody("POST", { user: { id: "bare" } }));
    strictEqual(bare.status, 200);
    deepStrictEqual(bare.body.user, {
      id: "bare",
      primaryParty: "",
      isDeactivated: false,
      metadata: { resourceVersion: "0", annotations: {} },
      identityProviderId: "",
      primaryPartyAuthentication: false,
    });
    const alice = await call(
      "/v2/users",
      jsonBody("POST", {
        user: { id: "alice", primaryParty: party, metadata: { annotations: { team: "blue" } } },
        rights: [
          { kind: { CanActAs: { value: { party } } } },
          { kind: { CanReadAsAnyParty: { value: {} } } },
        ],
      }),
    );
    strictEqual(alice.status, 200);
    strictEqual((alice.body.user as Json).primaryParty, party);
  });

  it("refuses a duplicate user with 409 USER_ALREADY_EXISTS and a bad id with 400", async () => {
    const again = await call("/v2/users", jsonBody("POST", { user: { id: "alice" } }));
    strictEqual(again.status, 409);
    strictEqual(again.body.code, "USER_ALREADY_EXISTS");
    strictEqual(again.body.cause, 'creating user failed, as user "alice" already exists');
    const bad = await call("/v2/users", jsonBody("POST", { user: { id: "no spaces" } }));
    strictEqual(bad.status, 400);
    strictEqual(bad.body.code, "INVALID_FIELD");
  });

  it("gets a user, and 404 USER_NOT_FOUND for an unknown one", async () => {
    strictEqual(((await call("/v2/users/alice")).body.user as Json).id, "alice");
    const missing = await call("/v2/users/nobody-here");
    strictEqual(missing.status, 404);
    strictEqual(missing.body.code, "USER_NOT_FOUND");
    strictEqual(missing.body.cause, 'getting user failed for unknown user "nobody-here"');
  });

  it("answers the authenticated user for the token's own user", async () => {
    const own = await call("/v2/authenticated-user", { token: signToken("alice") });
    strictEqual((own.body.user as Json).id, "alice");
  });

  it("pages the user list with Canton's tokens", async () => {
    const first = await call("/v2/users?pageSize=2");
    deepStrictEqual(
      (first.body.users as Json[]).map((u) => u.id),
      ["alice", "bare"],
    );
    ok((first.body.nextPageToken as string).length > 0);
    const second = await call(`/v2/users?pageSize=2&pageToken=${first.body.nextPageToken}`);
    deepStrictEqual(
      (second.body.users as Json[]).map((u) => u.id),
      ["participant_admin"],
    );
    strictEqual(second.body.nextPageToken, "");
    strictEqual((await call("/v2/users?pageToken=garbage!")).status, 400);
  });

  it("updates with a field mask and checks the resource version", async () => {
    const updated = await call(
      "/v2/users/alice",
      jsonBody("PATCH", {
        user: {
          id: "alice",
          isDeactivated: true,
          metadata: { resourceVersion: "0", annotations: { team: "" } },
        },
        updateMask: { paths: ["is_deactivated", "metadata"] },
      }),
    );
    strictEqual(updated.status, 200, JSON.stringify(updated.body));
    const user = updated.body.user as Json;
    strictEqual(user.isDeactivated, true);
    deepStrictEqual(user.metadata, { resourceVersion: "1", annotations: {} });
    const stale = await call(
      "/v2/users/alice",
      jsonBody("PATCH", {
        user: { id: "alice", metadata: { resourceVersion: "0", annotations: {} } },
        updateMask: { paths: ["is_deactivated"] },
      }),
    );
    strictEqual(stale.status, 409);
    strictEqual(stale.body.code, "CONCURRENT_USER_UPDATE_DETECTED");
    const badMask = await call(
      "/v2/users/alice",
      jsonBody("PATCH", { user: { id: "alice" }, updateMask: { paths: ["nope"] } }),
    );
    strictEqual(badMask.body.code, "INVALID_USER_UPDATE_REQUEST");
    const mismatch = await call(
      "/v2/users/alice",
      jsonBody("PATCH", { user: { id: "bob" }, updateMask: { paths: [] } }),
    );
    strictEqual(mismatch.status, 400);
    strictEqual(
      mismatch.body.cause,
      "The submitted request has invalid arguments: alice does not match user in body: Some(bob) ",
    );
  });

  it("grants and revokes, answering only the rights that changed", async () => {
    const granted = await call(
      "/v2/users/bare/rights",
      jsonBody("POST", {
        userId: "bare",
        rights: [
          { kind: { CanReadAs: { value: { party } } } },
          { kind: { IdentityProviderAdmin: { value: {} } } },
        ],
      }),
    );
    strictEqual(Array.isArray(granted.body.newlyGrantedRights) && granted.body.newlyGrantedRights.length, 2);
    const again = await call(
      "/v2/users/bare/rights",
      jsonBody("POST", { userId: "bare", rights: [{ kind: { CanReadAs: { value: { party } } } }] }),
    );
    deepStrictEqual(again.body, { newlyGrantedRights: [] });
    const revoked = await call(
      "/v2/users/bare/rights",
      jsonBody("PATCH", {
        userId: "bare",
        rights: [{ kind: { CanReadAs: { value: { party } } } }, { kind: { CanActAs: { value: { party } } } }],
      }),
    );
    deepStrictEqual(revoked.body, { newlyRevokedRights: [{ kind: { CanReadAs: { value: { party } } } }] });
  });

  it("moves a user to another identity provider and deletes users with their rights", async () => {
    const idp = await call(
      "/v2/idps",
      jsonBody("POST", {
        identityProviderConfig: {
          identityProviderId: "idp-u",
          issuer: "iss-u",
          jwksUrl: "https://idp.example/jwks",
        },
      }),
    );
    strictEqual(idp.status, 200);
    const moved = await call(
      "/v2/users/bare/identity-provider-id",
      jsonBody("PATCH", { userId: "bare", sourceIdentityProviderId: "", targetIdentityProviderId: "idp-u" }),
    );
    deepStrictEqual(moved, { status: 200, body: {} });
    strictEqual((await call("/v2/users/bare?identity-provider-id=idp-u")).status, 200);
    strictEqual((await call("/v2/users/bare")).status, 403);
    await call(
      "/v2/users",
      jsonBody("POST", { user: { id: "temp" }, rights: [{ kind: { CanActAs: { value: { party } } } }] }),
    );
    deepStrictEqual(await call("/v2/users/temp", { method: "DELETE" }), { status: 200, body: {} });
    strictEqual((await call("/v2/users/temp/rights")).status, 404);
    await call("/v2/users", jsonBody("POST", { user: { id: "temp" } }));
    deepStrictEqual((await call("/v2/users/temp/rights")).body, { rights: [] });
  });

  it("grants CanActAs to the user named in AllocateParty", async () => {
    const allocated = await call(
      "/v2/parties",
      jsonBody("POST", { partyIdHint: "for-temp", userId: "temp" }),
    );
    strictEqual(allocated.status, 200);
    const newParty = (allocated.body.partyDetails as Json).party as string;
    deepStrictEqual((await call("/v2/users/temp/rights")).body, {
      rights: [{ kind: { CanActAs: { value: { party: newParty } } } }],
    });
  });
});
