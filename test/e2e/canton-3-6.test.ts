import assert from "node:assert/strict";
import { createHash, createPublicKey, verify } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { signToken } from "../jwt/test-tokens.js";
import { ed25519Wallet, type Wallet } from "../sandbox/interactive/wallet.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { assertCantonShape } from "./canton-shapes.js";
import { jsonSignature, onboardExternalParty } from "./external-wallet.js";
import { allocate, call, IOU, upgradeAs, userFor } from "./ledger-client.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads loosely typed JSON answers
type Json = Record<string, any>;

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

describe("the gateway in front of a Canton 3.6 sandbox: lookups by hash, JWKS, CanActAsAnyParty", () => {
  let stack: Stack;
  let wallet: Wallet;
  let party: string;
  let synchronizer: string;
  let userToken: string;
  let counter = 0;
  const next = (prefix: string) => `${prefix}-${++counter}`;

  const updateFormat = () => ({
    includeTransactions: {
      eventFormat: { filtersByParty: { [party]: { cumulative: [] } }, verbose: true },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  });
  const prepareIou = async (amount: string) => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/interactive-submission/prepare",
      {
        commandId: next("cmd"),
        actAs: [party],
        commands: [
          {
            CreateCommand: {
              templateId: IOU,
              createArguments: { issuer: party, owner: party, currency: "EUR", amount, observers: [] },
            },
          },
        ],
      },
      userToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body;
  };
  const execute = (path: string, prepared: Json) =>
    call<Json>(
      stack,
      "POST",
      `/v2/interactive-submission/${path}`,
      {
        preparedTransaction: prepared.preparedTransaction,
        partySignatures: {
          signatures: [
            {
              party,
              signatures: [jsonSignature(wallet, Buffer.from(prepared.preparedTransactionHash, "base64"))],
            },
          ],
        },
        submissionId: next("sub"),
        hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
        deduplicationPeriod: { Empty: {} },
      },
      userToken,
    );

  before(async () => {
    stack = await startStack([], {}, { sandbox: { apiVersion: "3.6.0" } });
    wallet = ed25519Wallet();
    userToken = await userFor(stack, "wallet-user-36", []);
    const synchronizers = await call<Json>(stack, "GET", "/v2/state/connected-synchronizers");
    synchronizer = synchronizers.body.connectedSynchronizers[0].synchronizerId;
    ({ party } = await onboardExternalParty(stack, wallet, synchronizer, "wallet36", "wallet-user-36"));
  });
  after(() => stack.stop());

  it("serves update-by-hash for an externally signed transaction, in 3.6's shape", async () => {
    const prepared = await prepareIou("100");
    const executed = await execute("executeAndWait", prepared);
    assert.equal(executed.status, 200, JSON.stringify(executed.body));
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-hash",
      { transactionHash: prepared.preparedTransactionHash, updateFormat: updateFormat() },
      userToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assertCantonShape("JsGetUpdateResponse", reply.body, "3.6.0");
    const transaction = reply.body.update.Transaction.value;
    assert.equal(transaction.updateId, executed.body.updateId);
    assert.equal(transaction.offset, executed.body.completionOffset);
    assert.equal(transaction.transactionHash, prepared.preparedTransactionHash);
    assert.equal(transaction.externalTransactionHash, prepared.preparedTransactionHash);
    assert.equal(transaction.events[0].CreatedEvent.createArgument.amount, "100.0000000000");

    const unknown = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-hash",
      { transactionHash: Buffer.from("no such hash").toString("base64"), updateFormat: updateFormat() },
      userToken,
    );
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    assert.equal(unknown.body.code, "UPDATE_NOT_FOUND");
    // A reader without a right on the party sees nothing of it.
    const stranger = await userFor(stack, "stranger-36", [await allocate(stack, "stranger36")]);
    const hidden = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-hash",
      { transactionHash: prepared.preparedTransactionHash, updateFormat: updateFormat() },
      stranger,
    );
    assert.equal(hidden.status, 403, JSON.stringify(hidden.body));
  });

  it("answers 400 Invalid value for an update-by-hash body without its required fields", async () => {
    const reply = await call<string>(stack, "POST", "/v2/updates/update-by-hash", {
      transactionHash: "AA==",
    });
    assert.equal(reply.status, 400);
    assert.match(reply.body, /^Invalid value for: body/);
  });

  it("serves completion-by-hash: the accepted completion, then the rejection of a replay", async () => {
    const prepared = await prepareIou("5");
    const executed = await execute("executeAndWait", prepared);
    assert.equal(executed.status, 200, JSON.stringify(executed.body));
    const lookup = () =>
      call<Json>(
        stack,
        "POST",
        "/v2/commands/completion-by-hash",
        { transactionHash: prepared.preparedTransactionHash },
        userToken,
      );
    const accepted = await lookup();
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assertCantonShape("GetCompletionByHashResponse", accepted.body, "3.6.0");
    assert.equal(accepted.body.acceptedCompletion.updateId, executed.body.updateId);
    assert.equal(accepted.body.acceptedCompletion.offset, executed.body.completionOffset);
    assert.equal(accepted.body.acceptedCompletion.transactionHash, prepared.preparedTransactionHash);
    assert.deepEqual(accepted.body.lastRejectedCompletions, []);

    // The asynchronous execute of the same transaction again: accepted for submission, then
    // rejected as a duplicate, which only its completion shows.
    const replay = await execute("execute", prepared);
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    const both = await lookup();
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assertCantonShape("GetCompletionByHashResponse", both.body, "3.6.0");
    assert.equal(both.body.acceptedCompletion.updateId, executed.body.updateId);
    assert.equal(both.body.lastRejectedCompletions.length, 1);
    const rejected = both.body.lastRejectedCompletions[0];
    assert.equal(rejected.status.code, 6, "ALREADY_EXISTS: DUPLICATE_COMMAND");
    assert.equal(rejected.updateId, "");
    assert.equal(rejected.transactionHash, prepared.preparedTransactionHash);

    const none = await call<Json>(
      stack,
      "POST",
      "/v2/commands/completion-by-hash",
      { transactionHash: Buffer.from("unknown").toString("base64") },
      userToken,
    );
    assert.equal(none.status, 404, JSON.stringify(none.body));
    assert.equal(none.body.code, "COMPLETION_NOT_FOUND");
    assert.deepEqual(none.body.resources, [["TRANSACTION_HASH", Buffer.from("unknown").toString("hex")]]);
    // A caller that reads as no party at all is refused before any lookup (MatchReadAsParties).
    const admin = await call<Json>(stack, "POST", "/v2/commands/completion-by-hash", {
      transactionHash: prepared.preparedTransactionHash,
    });
    assert.equal(admin.status, 403, JSON.stringify(admin.body));
    // One that reads other parties only does not see completions acting as the external party.
    const outsider = await userFor(stack, "outsider-36", [await allocate(stack, "outsider36")]);
    const hidden = await call<Json>(
      stack,
      "POST",
      "/v2/commands/completion-by-hash",
      { transactionHash: prepared.preparedTransactionHash },
      outsider,
    );
    assert.equal(hidden.status, 404, JSON.stringify(hidden.body));
    assert.equal(hidden.body.code, "COMPLETION_NOT_FOUND");
  });

  it("serves the external party's key as a JWKS that verifies a JWT the party signed itself", async () => {
    const path = `/v2/jose/jwks/synchronizer/${encodeURIComponent(synchronizer)}/party/${encodeURIComponent(party)}`;
    const reply = await call<Json>(stack, "GET", path, undefined, userToken);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assertCantonShape("GetJwksResponse", reply.body, "3.6.0");
    assert.equal(reply.body.keys.length, 1);
    const jwk = reply.body.keys[0];
    const raw = wallet.publicKey.keyData.subarray(-32);
    assert.deepEqual(
      { kty: jwk.kty, crv: jwk.crv, x: jwk.x, alg: jwk.alg, use: jwk.use },
      { kty: "OKP", crv: "Ed25519", x: base64url(raw), alg: "EdDSA", use: "sig" },
    );
    // RFC 7638: the thumbprint over the required members, in lexicographic order.
    const thumbprint = createHash("sha256")
      .update(`{"crv":"Ed25519","kty":"OKP","x":"${base64url(raw)}"}`)
      .digest("base64url");
    assert.equal(jwk.kid, thumbprint);
    // A party JWT: Ed25519's signature over the signing input is the JWS signature as it is.
    const input = `${base64url(JSON.stringify({ alg: "EdDSA", kid: jwk.kid }))}.${base64url(JSON.stringify({ sub: party }))}`;
    const signature = wallet.sign(Buffer.from(input)).signature;
    assert.ok(verify(null, Buffer.from(input), createPublicKey({ key: jwk, format: "jwk" }), signature));

    const local = await allocate(stack, "local36");
    const noKeys = await call<Json>(
      stack,
      "GET",
      `/v2/jose/jwks/synchronizer/${encodeURIComponent(synchronizer)}/party/${encodeURIComponent(local)}`,
      undefined,
      userToken,
    );
    assert.equal(noKeys.status, 404, JSON.stringify(noKeys.body));
    assert.equal(noKeys.body.code, "PARTY_SIGNING_KEYS_NOT_FOUND");
    const badSynchronizer = await call<Json>(
      stack,
      "GET",
      `/v2/jose/jwks/synchronizer/nope/party/${encodeURIComponent(party)}`,
      undefined,
      userToken,
    );
    assert.equal(badSynchronizer.status, 400, JSON.stringify(badSynchronizer.body));
  });

  it("CanActAsAnyParty: an admin grants it, its holder submits as a party it has no other right for", async () => {
    const owner = await allocate(stack, "owner36");
    const created = await call<Json>(stack, "POST", "/v2/users", {
      user: { id: "any-actor", primaryParty: "" },
      rights: [{ kind: { CanActAsAnyParty: { value: {} } } }],
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const rights = await call<Json>(stack, "GET", "/v2/users/any-actor/rights");
    assert.equal(rights.status, 200, JSON.stringify(rights.body));
    assertCantonShape("ListUserRightsResponse", rights.body, "3.6.0");
    assert.deepEqual(rights.body.rights, [{ kind: { CanActAsAnyParty: { value: {} } } }]);
    /** An Iou of `owner`, created by any-actor, which has no right on `owner` but (maybe) CanActAsAnyParty. */
    const createAsAnyActor = () =>
      call<Json>(
        stack,
        "POST",
        "/v2/commands/submit-and-wait",
        {
          commandId: next("any-actor"),
          actAs: [owner],
          commands: [
            {
              CreateCommand: {
                templateId: IOU,
                createArguments: { issuer: owner, owner, currency: "CHF", amount: "1", observers: [] },
              },
            },
          ],
        },
        tokenFor("any-actor"),
      );

    const submitted = await createAsAnyActor();
    assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
    // Without the right, the same user may not.
    const revoked = await call<Json>(stack, "PATCH", "/v2/users/any-actor/rights", {
      userId: "any-actor",
      rights: [{ kind: { CanActAsAnyParty: { value: {} } } }],
    });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.deepEqual(revoked.body.newlyRevokedRights, [{ kind: { CanActAsAnyParty: { value: {} } } }]);
    const refused = await createAsAnyActor();
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
  });

  it("CanActAsAnyParty: an identity provider's admin may not grant it, not even to itself", async () => {
    const idpAdmin = await call<Json>(stack, "POST", "/v2/users", {
      user: { id: "idp-admin-36", primaryParty: "" },
      rights: [{ kind: { IdentityProviderAdmin: { value: {} } } }],
    });
    assert.equal(idpAdmin.status, 200, JSON.stringify(idpAdmin.body));
    const grant = await call<Json>(
      stack,
      "POST",
      "/v2/users/idp-admin-36/rights",
      { userId: "idp-admin-36", rights: [{ kind: { CanActAsAnyParty: { value: {} } } }] },
      tokenFor("idp-admin-36"),
    );
    assert.equal(grant.status, 403, JSON.stringify(grant.body));
    // Canton redacts permission errors (code "NA", the request id only).
    assert.equal(grant.body.code, "NA");
    const rights = await call<Json>(stack, "GET", "/v2/users/idp-admin-36/rights");
    assert.deepEqual(rights.body.rights, [{ kind: { IdentityProviderAdmin: { value: {} } } }]);
  });

  it("counts tokens without aud (scope-based, refused from Canton 3.7 on), audience-based ones not", async () => {
    const counted = () => gatewayMetric(stack.url, "ledger_gateway_tokens_without_audience_total");
    const before = await counted();
    const wsUrl = stack.url.replace(/^http/, "ws");
    assert.equal((await upgradeAs(wsUrl, tokenFor())).status, 101);
    assert.equal(await counted(), before, "an audience-based token is not counted");
    const scopeBased = signToken("participant_admin", { key: "any", audience: null, exp: null });
    assert.equal((await upgradeAs(wsUrl, scopeBased)).status, 101, "3.6 still accepts it");
    assert.equal(await counted(), before + 1);
  });
});
