import { ok, strictEqual } from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { AUDIENCE, signToken, unsignedToken } from "../jwt/test-tokens.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

const SECRET = "secrecy-secret";

/** A pino logger at `trace` writing into a string buffer. */
function capturingLogger(): { log: pino.Logger; text: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: "trace" }, sink), text: () => chunks.join("") };
}

describe("tokens never appear in logs, metrics or error bodies", () => {
  let stack: Stack;
  const gatewayLog = capturingLogger();
  const sandboxLog = capturingLogger();
  const bodies: string[] = [];
  // Distinctive tokens: each must be findable if it leaked anywhere, whole or by signature.
  const tokens = {
    admin: signToken("participant_admin", { key: SECRET, extra: { marker: "admin-marker-7f3a" } }),
    badSignature: signToken("participant_admin", {
      key: "not-the-secret",
      extra: { marker: "bad-sig-9c1e" },
    }),
    expired: signToken("participant_admin", {
      key: SECRET,
      exp: 1_000_000,
      extra: { marker: "expired-2b7d" },
    }),
    unknownUser: signToken("ghost-user", { key: SECRET, extra: { marker: "ghost-5e8f" } }),
    unsigned: unsignedToken("participant_admin"),
    malformed: "malformed-token-4d2c-xyzzy",
  };

  before(async () => {
    stack = await startStack(
      ["--auth.mode", "unsafe-decode", "--log.level", "trace"],
      {},
      {
        sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE }, log: sandboxLog.log },
        gatewayLog: gatewayLog.log,
      },
    );
    const requests: [string, RequestInit][] = [
      ["/v2/version", {}],
      ["/v2/users", {}],
      ["/v2/users", jsonBody("POST", { user: { id: "carol" }, rights: [] })],
      ["/v2/idps", {}],
      ["/v2/parties", jsonBody("POST", { partyIdHint: "secrecy" })],
      ["/v2/authenticated-user", {}],
    ];
    for (const token of Object.values(tokens)) {
      for (const [path, init] of requests) {
        const response = await stack.request(path, { ...init, token });
        bodies.push(await response.text());
      }
    }
    bodies.push(await (await fetch(`${stack.url}/metrics`)).text());
  });
  after(() => stack.stop());

  it("answers the bad tokens with 401 and the unknown user with 403", async () => {
    strictEqual((await stack.request("/v2/version", { token: tokens.admin })).status, 200);
    strictEqual((await stack.request("/v2/version", { token: tokens.badSignature })).status, 401);
    strictEqual((await stack.request("/v2/version", { token: tokens.unknownUser })).status, 403);
  });

  it("finds no token, nor any token's signature, in logs, metrics or bodies", () => {
    const haystacks = {
      gatewayLog: gatewayLog.text(),
      sandboxLog: sandboxLog.text(),
      bodies: bodies.join("\n"),
    };
    ok(haystacks.gatewayLog.length > 0 && haystacks.sandboxLog.length > 0, "the logs captured something");
    for (const [name, token] of Object.entries(tokens)) {
      const signature = token.split(".")[2] ?? "";
      for (const [where, text] of Object.entries(haystacks)) {
        ok(!text.includes(token), `${name} token found in ${where}`);
        if (signature.length > 8) ok(!text.includes(signature), `${name} token signature found in ${where}`);
      }
    }
  });

  it("logs the user id for audit, but keeps it out of the metrics", () => {
    ok(gatewayLog.text().includes("participant_admin"));
    ok(!bodies.at(-1)?.includes("participant_admin"));
    ok(!bodies.at(-1)?.includes("ghost-user"));
  });
});
