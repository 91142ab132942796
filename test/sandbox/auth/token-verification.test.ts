import { strictEqual } from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { createTokenVerifier } from "../../../src/jwt/token-verifier.js";
import type { GetUserResponse__Output } from "../../../src/proto/ledger-api-types.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/sandbox.js";
import { AUDIENCE, signToken, unsignedToken } from "../../jwt/test-tokens.js";
import { bearer, rejection, SERVICES, serviceClient } from "../sandbox-client.js";

const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
const pem = (key: { export(o: object): string | Buffer }, type: string) =>
  key.export({ type, format: "pem" }).toString();
const rsaPrivate = pem(rsa.privateKey, "pkcs8");
const ecPrivate = pem(ec.privateKey, "pkcs8");
const past = Math.floor(Date.now() / 1000) - 60;

describe("token verification modes", () => {
  const cases: [string, Parameters<typeof createTokenVerifier>[0], string, boolean][] = [
    ["HS256 with the secret", { mode: "hs256", secret: "s" }, signToken("u", { key: "s" }), true],
    ["HS256 with another secret", { mode: "hs256", secret: "s" }, signToken("u", { key: "x" }), false],
    [
      "RS256 with the PEM key",
      { mode: "rs256", publicKeyPem: pem(rsa.publicKey, "spki") },
      signToken("u", { key: rsaPrivate, algorithm: "RS256" }),
      true,
    ],
    [
      "RS256 signed by another key",
      { mode: "rs256", publicKeyPem: pem(rsa.publicKey, "spki") },
      signToken("u", {
        key: pem(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey, "pkcs8"),
        algorithm: "RS256",
      }),
      false,
    ],
    [
      "ES256 with the PEM key",
      { mode: "es256", publicKeyPem: pem(ec.publicKey, "spki") },
      signToken("u", { key: ecPrivate, algorithm: "ES256" }),
      true,
    ],
    [
      "ES256 given an HS256 token",
      { mode: "es256", publicKeyPem: pem(ec.publicKey, "spki") },
      signToken("u", { key: "s" }),
      false,
    ],
    [
      "RS256 from a JWKS by kid",
      {
        mode: "rs256",
        jwks: JSON.stringify({ keys: [{ ...rsa.publicKey.export({ format: "jwk" }), kid: "k1" }] }),
      },
      signToken("u", { key: rsaPrivate, algorithm: "RS256", kid: "k1" }),
      true,
    ],
    [
      "RS256 from a JWKS with an unknown kid",
      {
        mode: "rs256",
        jwks: JSON.stringify({ keys: [{ ...rsa.publicKey.export({ format: "jwk" }), kid: "k1" }] }),
      },
      signToken("u", { key: rsaPrivate, algorithm: "RS256", kid: "k2" }),
      false,
    ],
    ["unsafe with any signature", { mode: "unsafe" }, signToken("u", { key: "whatever" }), true],
    ["unsafe with alg none", { mode: "unsafe" }, unsignedToken("u"), false],
    ["HS256 with alg none", { mode: "hs256", secret: "s" }, unsignedToken("u"), false],
    ["unsafe with an expired token", { mode: "unsafe" }, signToken("u", { exp: past }), false],
    [
      "HS256 with an expired token",
      { mode: "hs256", secret: "s" },
      signToken("u", { key: "s", exp: past }),
      false,
    ],
    [
      "the target audience",
      { mode: "hs256", secret: "s", audience: AUDIENCE },
      signToken("u", { key: "s" }),
      true,
    ],
    [
      "another audience",
      { mode: "hs256", secret: "s", audience: AUDIENCE },
      signToken("u", { key: "s", audience: "other" }),
      false,
    ],
    [
      "the issuer",
      { mode: "hs256", secret: "s", issuer: "me" },
      signToken("u", { key: "s", issuer: "me" }),
      true,
    ],
    [
      "another issuer",
      { mode: "hs256", secret: "s", issuer: "me" },
      signToken("u", { key: "s", issuer: "you" }),
      false,
    ],
    [
      "a token without the ledger scope or a participant audience",
      { mode: "unsafe" },
      signToken("u", { audience: null, extra: { scope: "openid" } }),
      false,
    ],
    ["a scope-based token", { mode: "unsafe" }, signToken("u", { audience: null }), true],
  ];
  for (const [name, options, token, accepted] of cases) {
    it(`${accepted ? "accepts" : "rejects"} ${name}`, async () => {
      strictEqual((await createTokenVerifier(options).verify(token)).ok, accepted);
    });
  }
});

describe("sandbox in RS256 mode", () => {
  let sandbox: RunningSandbox;
  let version: ReturnType<typeof serviceClient>;
  let users: ReturnType<typeof serviceClient>;
  const rs = (user: string, exp?: number) =>
    signToken(user, { key: rsaPrivate, algorithm: "RS256", ...(exp !== undefined ? { exp } : {}) });
  before(async () => {
    sandbox = await startSandbox({ auth: { mode: "rs256", publicKeyPem: pem(rsa.publicKey, "spki") } });
    version = serviceClient(sandbox.port, SERVICES.version);
    users = serviceClient(sandbox.port, "com.daml.ledger.api.v2.admin.UserManagementService");
  });
  after(async () => {
    version.close();
    users.close();
    await sandbox.stop();
  });

  it("accepts a token signed with the private key", async () => {
    await version.GetLedgerApiVersion!({}, bearer(rs("participant_admin")));
  });

  it("answers UNAUTHENTICATED for a bad signature and for an expired token", async () => {
    strictEqual(
      (await rejection(version.GetLedgerApiVersion!({}, bearer(signToken("participant_admin"))))).code,
      grpc.status.UNAUTHENTICATED,
    );
    strictEqual(
      (await rejection(version.GetLedgerApiVersion!({}, bearer(rs("participant_admin", past))))).code,
      grpc.status.UNAUTHENTICATED,
    );
  });

  it("answers PERMISSION_DENIED for an unknown user and for a deactivated one", async () => {
    strictEqual(
      (await rejection(version.GetLedgerApiVersion!({}, bearer(rs("ghost"))))).code,
      grpc.status.PERMISSION_DENIED,
    );
    await users.CreateUser!({ user: { id: "off", isDeactivated: true } }, bearer(rs("participant_admin")));
    strictEqual(
      (await rejection(version.GetLedgerApiVersion!({}, bearer(rs("off"))))).code,
      grpc.status.PERMISSION_DENIED,
    );
  });

  it("defaults GetUser's empty user id to the token's user", async () => {
    const response = await users.GetUser!<GetUserResponse__Output>(
      { userId: "" },
      bearer(rs("participant_admin")),
    );
    strictEqual(response.user?.id, "participant_admin");
  });
});
