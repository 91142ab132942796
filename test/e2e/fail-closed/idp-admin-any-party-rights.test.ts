import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../../support/stack.js";
import { tokenFor } from "../../support/tokens.js";
import { partyFilter } from "../../support/update-requests.js";
import { allocate, call, createIouTransaction, userFor } from "../ledger-client.js";

const IDP = "corp";
const ISSUER = "https://login.corp";
/** Rights Canton 3.5.6 and later let only a participant admin grant. */
const ANY_PARTY_RIGHTS = ["CanReadAsAnyParty", "CanExecuteAsAnyParty"];

const right = (kind: string) => ({ kind: { [kind]: { value: {} } } });
const kindsOf = (rights: { kind: Record<string, unknown> }[]) =>
  rights.flatMap((r) => Object.keys(r.kind)).sort();

/**
 * Issue 35, attack 6: the sandbox lets an identity provider's admin become a reader of everything.
 *
 * The attack: the IdentityProviderAdmin of a non-default identity provider grants itself
 * CanReadAsAnyParty and CanExecuteAsAnyParty (200), and then reads alice's Iou, although alice is
 * no party of its provider.
 *
 * The fixed sandbox has Canton's rules (UserManagementServiceAuthorization, 3.5.6 and later):
 * those rights need ParticipantAdmin. The grant is refused 403 PERMISSION_DENIED, to itself and to
 * another user of its provider; the rights are unchanged; it cannot read alice's Iou.
 *
 * On 9c6ba21 it fails: both grants answer 200, and the admin lists alice's active Iou.
 */
describe("fail closed: an identity provider's admin granting rights over every party", () => {
  let stack: Stack;
  let alice: string;
  let aliceIou: string;
  /** The provider's admin's token: its `iss` places its user in the provider. */
  let idpAdmin: string;

  before(async () => {
    stack = await startStack();
    alice = await allocate(stack, "alice");
    const writer = await userFor(stack, "alice-writer", [alice]);
    const created = await createIouTransaction(stack, writer, "alice-iou", {
      issuer: alice,
      owner: alice,
      currency: "EUR",
      amount: "100",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    aliceIou = created.body.transaction.events[0].CreatedEvent.contractId as string;

    const idp = await call(stack, "POST", "/v2/idps", {
      identityProviderConfig: {
        identityProviderId: IDP,
        issuer: ISSUER,
        jwksUrl: `${ISSUER}/jwks`,
        audience: "",
      },
    });
    assert.equal(idp.status, 200, JSON.stringify(idp.body));
    for (const [id, rights] of [
      ["corp-admin", [right("IdentityProviderAdmin")]],
      ["corp-user", []],
    ] as const) {
      const user = await call(stack, "POST", "/v2/users", {
        user: { id, identityProviderId: IDP },
        rights,
      });
      assert.equal(user.status, 200, JSON.stringify(user.body));
    }
    idpAdmin = tokenFor("corp-admin", { iss: ISSUER });
  });
  after(() => stack.stop());

  const grant = (userId: string, kinds: string[]) =>
    call(
      stack,
      "POST",
      `/v2/users/${userId}/rights`,
      { userId, identityProviderId: IDP, rights: kinds.map(right) },
      idpAdmin,
    );
  const rightsOf = async (userId: string): Promise<string[]> => {
    const listed = await call<{ rights: { kind: Record<string, unknown> }[] }>(
      stack,
      "GET",
      `/v2/users/${userId}/rights`,
      undefined,
      idpAdmin,
    );
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    return kindsOf(listed.body.rights);
  };

  it("refuses the grant to itself and to a user of its provider with 403, and keeps alice's Iou from it", async () => {
    const toItself = await grant("corp-admin", ANY_PARTY_RIGHTS);
    const toItsUser = await grant("corp-user", ANY_PARTY_RIGHTS);
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    const read = await call<unknown>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { activeAtOffset: end, eventFormat: partyFilter(alice) },
      idpAdmin,
    );
    const readsAlicesIou = JSON.stringify(read.body).includes(aliceIou);

    assert.deepEqual(
      [toItself.status, toItsUser.status, readsAlicesIou],
      [403, 403, false],
      `an IdentityProviderAdmin of ${IDP} granted itself ${ANY_PARTY_RIGHTS} (${toItself.status}: ${JSON.stringify(toItself.body)}), granted them to a user of its provider (${toItsUser.status}), and ${readsAlicesIou ? "read" : "did not read"} alice's Iou (${read.status})`,
    );
    // PERMISSION_DENIED, which Canton and the sandbox redact (code NA): the gRPC code tells.
    for (const refused of [toItself, toItsUser]) {
      assert.equal(
        (refused.body as { grpcCodeValue?: number }).grpcCodeValue,
        7,
        JSON.stringify(refused.body),
      );
    }
    assert.deepEqual(await rightsOf("corp-admin"), ["IdentityProviderAdmin"]);
    assert.deepEqual(await rightsOf("corp-user"), []);
  });
});
