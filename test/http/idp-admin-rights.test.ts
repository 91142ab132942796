import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jsonBody, type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { acsDeltaFormat } from "../support/update-requests.js";

const IDP = "corp";
const ISSUER = "https://login.corp";
const READ_ANY_PARTY = { kind: { CanReadAsAnyParty: { value: {} } } };
const IDP_ADMIN = { kind: { IdentityProviderAdmin: { value: {} } } };
const EXECUTE_ANY_PARTY = { kind: { CanExecuteAsAnyParty: { value: {} } } };

type Json = Record<string, unknown>;

/**
 * The sandbox's user management as Canton 3.5.10's, through the gateway: an identity provider's
 * admin could grant itself CanReadAsAnyParty and read every party's transactions (Canton before
 * 3.5.6); now only a participant admin grants or revokes the participant-wide rights.
 */
describe("an identity provider's admin and the participant-wide rights, over HTTP", () => {
  let stack: Stack;
  let party: string;
  /** The corp provider's admin: its token's `iss` is the provider's issuer. */
  const corpAdmin = tokenFor("corp-admin", { iss: ISSUER });
  const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const res = await stack.request(path, init);
    return { status: res.status, body: (await res.json()) as Json };
  };
  /**
   * A user's rights, as its provider's admin lists them: GET /v2/users/{id}/rights names no
   * provider, and the provider's token implies its own.
   */
  const rightsOf = async (userId: string) => {
    const listed = await call(`/v2/users/${userId}/rights`, { token: corpAdmin });
    strictEqual(listed.status, 200, JSON.stringify(listed.body));
    return listed.body.rights;
  };
  /** Everything on the ledger, for any party: what CanReadAsAnyParty would open. */
  const readEveryParty = (token: string) =>
    call("/v2/updates", {
      ...jsonBody("POST", { beginExclusive: 0, updateFormat: acsDeltaFormat({ filtersForAnyParty: {} }) }),
      token,
    });

  before(async () => {
    stack = await startStack();
    const idp = await call(
      "/v2/idps",
      jsonBody("POST", {
        identityProviderConfig: { identityProviderId: IDP, issuer: ISSUER, jwksUrl: `${ISSUER}/jwks` },
      }),
    );
    strictEqual(idp.status, 200, JSON.stringify(idp.body));
    const allocated = await call(
      "/v2/parties",
      jsonBody("POST", { partyIdHint: "corp-party", identityProviderId: IDP }),
    );
    party = (allocated.body.partyDetails as Json).party as string;
    for (const [id, rights] of [
      ["corp-admin", [IDP_ADMIN]],
      ["corp-user", []],
    ] as const) {
      const created = await call(
        "/v2/users",
        jsonBody("POST", { user: { id, identityProviderId: IDP }, rights }),
      );
      strictEqual(created.status, 200, JSON.stringify(created.body));
    }
  });
  after(() => stack.stop());

  it("refuses the provider's admin granting itself CanReadAsAnyParty: 403 PERMISSION_DENIED, rights unchanged, nothing to read", async () => {
    const refused = await call("/v2/users/corp-admin/rights", {
      ...jsonBody("POST", { userId: "corp-admin", identityProviderId: IDP, rights: [READ_ANY_PARTY] }),
      token: corpAdmin,
    });
    strictEqual(refused.status, 403);
    strictEqual(refused.body.grpcCodeValue, 7);
    deepStrictEqual(await rightsOf("corp-admin"), [IDP_ADMIN]);
    strictEqual((await readEveryParty(corpAdmin)).status, 403);
  });

  it("refuses the provider's admin granting CanExecuteAsAnyParty to its user, and revoking what a participant admin granted", async () => {
    const granted = await call("/v2/users/corp-user/rights", {
      ...jsonBody("POST", { userId: "corp-user", identityProviderId: IDP, rights: [EXECUTE_ANY_PARTY] }),
      token: corpAdmin,
    });
    strictEqual(granted.status, 403);
    deepStrictEqual(await rightsOf("corp-user"), []);
    strictEqual(
      (
        await call(
          "/v2/users/corp-user/rights",
          jsonBody("POST", { userId: "corp-user", identityProviderId: IDP, rights: [READ_ANY_PARTY] }),
        )
      ).status,
      200,
    );
    const revoked = await call("/v2/users/corp-user/rights", {
      ...jsonBody("PATCH", { userId: "corp-user", identityProviderId: IDP, rights: [READ_ANY_PARTY] }),
      token: corpAdmin,
    });
    strictEqual(revoked.status, 403);
    deepStrictEqual(await rightsOf("corp-user"), [READ_ANY_PARTY]);
  });

  it("refuses the provider's admin creating a user with CanReadAsAnyParty: 403, no such user", async () => {
    const created = await call("/v2/users", {
      ...jsonBody("POST", { user: { id: "corp-super", identityProviderId: IDP }, rights: [READ_ANY_PARTY] }),
      token: corpAdmin,
    });
    strictEqual(created.status, 403);
    strictEqual((await call(`/v2/users/corp-super?identity-provider-id=${IDP}`)).status, 404);
  });

  it("still lets the provider's admin grant rights on its own parties", async () => {
    const right = { kind: { CanReadAs: { value: { party } } } };
    const granted = await call("/v2/users/corp-user/rights", {
      ...jsonBody("POST", { userId: "corp-user", identityProviderId: IDP, rights: [right] }),
      token: corpAdmin,
    });
    deepStrictEqual(granted, { status: 200, body: { newlyGrantedRights: [right] } });
  });

  it("lets a participant admin grant CanReadAsAnyParty to the provider's admin, which can then read every party", async () => {
    const granted = await call(
      "/v2/users/corp-admin/rights",
      jsonBody("POST", { userId: "corp-admin", identityProviderId: IDP, rights: [READ_ANY_PARTY] }),
    );
    deepStrictEqual(granted, { status: 200, body: { newlyGrantedRights: [READ_ANY_PARTY] } });
    strictEqual((await readEveryParty(corpAdmin)).status, 200);
  });
});
