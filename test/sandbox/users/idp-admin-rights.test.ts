import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { Right } from "../../../src/proto/ledger-api-types.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/sandbox.js";
import { signToken } from "../../jwt/test-tokens.js";
import { capturingLogger } from "../../support/capturing-logger.js";
import { bearer, rejection, serviceClient } from "../sandbox-client.js";

const USERS = "com.daml.ledger.api.v2.admin.UserManagementService";
const IDPS = "com.daml.ledger.api.v2.admin.IdentityProviderConfigService";
const PARTIES = "com.daml.ledger.api.v2.admin.PartyManagementService";
const IDP = "corp";
const ISSUER = "https://login.corp";
const MISSING_ADMIN =
  "The provided authorization token is not sufficient to authorize the intended command: Claims do not authorize the use of administrative services.";

const readAnyParty: Right = { canReadAsAnyParty: {} };
const executeAnyParty: Right = { canExecuteAsAnyParty: {} };
const participantAdmin: Right = { participantAdmin: {} };
const idpAdmin: Right = { identityProviderAdmin: {} };

/**
 * Canton 3.5.6 and later (UserManagementServiceAuthorization.needsParticipantAdmin): an identity
 * provider's admin manages its own users' rights on its own parties, and only a participant admin
 * grants or revokes ParticipantAdmin, CanReadAsAnyParty and CanExecuteAsAnyParty.
 */
describe("sandbox: what an identity provider's admin may grant and revoke (Canton 3.5.10)", () => {
  let sandbox: RunningSandbox;
  let users: ReturnType<typeof serviceClient>;
  let party: string;
  const logged = capturingLogger();
  /** The corp provider's admin: its token's `iss` is the provider's issuer. */
  const asCorpAdmin = () => bearer(signToken("corp-admin", { issuer: ISSUER, audience: null }));
  const rightsOf = async (userId: string) =>
    (await users.ListUserRights!<{ rights: Right[] }>({ userId, identityProviderId: IDP })).rights.map(
      (right) => Object.keys(right).find((key) => key !== "kind"),
    );
  /** PERMISSION_DENIED, redacted on the wire, with Canton's cause in the sandbox's log. */
  const deniedAsNotAdmin = async (call: Promise<unknown>) => {
    const error = await rejection(call);
    strictEqual(error.code, grpc.status.PERMISSION_DENIED);
    match(error.details, /^An error occurred\. Please contact the operator/);
    const requestId = error.status.requestInfos[0]?.requestId;
    const entry = logged.entries().find((e) => e.tid === requestId && e.code === "PERMISSION_DENIED");
    strictEqual(entry?.msg, MISSING_ADMIN);
  };

  before(async () => {
    sandbox = await startSandbox({ port: 0, log: logged.log });
    users = serviceClient(sandbox.port, USERS);
    const idps = serviceClient(sandbox.port, IDPS);
    const parties = serviceClient(sandbox.port, PARTIES);
    await idps.CreateIdentityProviderConfig!({
      identityProviderConfig: { identityProviderId: IDP, issuer: ISSUER, jwksUrl: `${ISSUER}/jwks` },
    });
    const allocated = await parties.AllocateParty!<{ partyDetails: { party: string } }>({
      partyIdHint: "corp-party",
      identityProviderId: IDP,
    });
    party = allocated.partyDetails.party;
    await users.CreateUser!({ user: { id: "corp-admin", identityProviderId: IDP }, rights: [idpAdmin] });
    await users.CreateUser!({ user: { id: "corp-user", identityProviderId: IDP } });
    idps.close();
    parties.close();
  });
  after(async () => {
    users.close();
    await sandbox.stop();
  });

  for (const [name, right] of [
    ["CanReadAsAnyParty", readAnyParty],
    ["CanExecuteAsAnyParty", executeAnyParty],
    ["ParticipantAdmin", participantAdmin],
  ] as const) {
    it(`refuses the provider's admin granting ${name}, to itself or its user, and changes nothing`, async () => {
      for (const userId of ["corp-admin", "corp-user"]) {
        await deniedAsNotAdmin(
          users.GrantUserRights!({ userId, identityProviderId: IDP, rights: [right] }, asCorpAdmin()),
        );
      }
      deepStrictEqual(await rightsOf("corp-admin"), ["identityProviderAdmin"]);
      deepStrictEqual(await rightsOf("corp-user"), []);
    });
  }

  it("refuses a grant that mixes a party right with a participant-wide one, whole", async () => {
    await deniedAsNotAdmin(
      users.GrantUserRights!(
        { userId: "corp-user", identityProviderId: IDP, rights: [{ canReadAs: { party } }, readAnyParty] },
        asCorpAdmin(),
      ),
    );
    deepStrictEqual(await rightsOf("corp-user"), []);
  });

  it("lets the provider's admin grant and revoke rights on its provider's parties, and IdentityProviderAdmin", async () => {
    const own: Right[] = [
      { canActAs: { party } },
      { canReadAs: { party } },
      { canExecuteAs: { party } },
      idpAdmin,
    ];
    const granted = await users.GrantUserRights!<{ newlyGrantedRights: Right[] }>(
      { userId: "corp-user", identityProviderId: IDP, rights: own },
      asCorpAdmin(),
    );
    strictEqual(granted.newlyGrantedRights.length, 4);
    const revoked = await users.RevokeUserRights!<{ newlyRevokedRights: Right[] }>(
      { userId: "corp-user", identityProviderId: IDP, rights: own },
      asCorpAdmin(),
    );
    strictEqual(revoked.newlyRevokedRights.length, 4);
    deepStrictEqual(await rightsOf("corp-user"), []);
  });

  it("refuses the provider's admin revoking a participant-wide right a participant admin granted", async () => {
    await users.GrantUserRights!({ userId: "corp-user", identityProviderId: IDP, rights: [readAnyParty] });
    await deniedAsNotAdmin(
      users.RevokeUserRights!(
        { userId: "corp-user", identityProviderId: IDP, rights: [readAnyParty] },
        asCorpAdmin(),
      ),
    );
    deepStrictEqual(await rightsOf("corp-user"), ["canReadAsAnyParty"]);
    const revoked = await users.RevokeUserRights!<{ newlyRevokedRights: Right[] }>({
      userId: "corp-user",
      identityProviderId: IDP,
      rights: [readAnyParty],
    });
    strictEqual(revoked.newlyRevokedRights.length, 1);
  });

  it("refuses the provider's admin creating a user with a participant-wide right; the user does not exist", async () => {
    for (const right of [readAnyParty, executeAnyParty, participantAdmin]) {
      await deniedAsNotAdmin(
        users.CreateUser!(
          { user: { id: "corp-super", identityProviderId: IDP }, rights: [right] },
          asCorpAdmin(),
        ),
      );
    }
    strictEqual(
      (await rejection(users.GetUser!({ userId: "corp-super", identityProviderId: IDP }))).status
        .errorInfos[0]?.reason,
      "USER_NOT_FOUND",
    );
    await users.CreateUser!(
      { user: { id: "corp-reader", identityProviderId: IDP }, rights: [{ canReadAs: { party } }] },
      asCorpAdmin(),
    );
    deepStrictEqual(await rightsOf("corp-reader"), ["canReadAs"]);
  });

  it("lets a participant admin grant every right to the provider's users, at creation too", async () => {
    const all = [readAnyParty, executeAnyParty, participantAdmin];
    const granted = await users.GrantUserRights!<{ newlyGrantedRights: Right[] }>({
      userId: "corp-user",
      identityProviderId: IDP,
      rights: all,
    });
    strictEqual(granted.newlyGrantedRights.length, 3);
    await users.CreateUser!({ user: { id: "corp-super", identityProviderId: IDP }, rights: all });
    deepStrictEqual((await rightsOf("corp-super")).sort(), [
      "canExecuteAsAnyParty",
      "canReadAsAnyParty",
      "participantAdmin",
    ]);
  });
});
