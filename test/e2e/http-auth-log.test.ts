import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { upgradeAs } from "./ledger-client.js";

const SECRET = "auth-log-secret";

describe("a refused token's 401 and the gateway's log (auth.mode hs256)", () => {
  let stack: Stack;
  const gatewayLog = capturingLogger();
  before(async () => {
    stack = await startStack(
      ["--auth.mode", "hs256", "--auth.secret", SECRET, "--auth.audience", AUDIENCE],
      {},
      {
        sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } },
        gatewayLog: gatewayLog.log,
      },
    );
  });
  after(() => stack.stop());

  const refusals: [string, string, RegExp][] = [
    ["a bad signature", signToken("forger", { key: "wrong-key", audience: AUDIENCE }), /signature/i],
    [
      "an expired token",
      signToken("late-user", { key: SECRET, audience: AUDIENCE, exp: Math.floor(Date.now() / 1000) - 60 }),
      /expired/i,
    ],
    ["another audience", signToken("elsewhere", { key: SECRET, audience: "https://other.example" }), /aud/i],
  ];
  for (const [what, token, reason] of refusals) {
    it(`answers ${what} with Canton's 401 and a correlation id naming the log entry with the reason`, async () => {
      const response = await stack.request("/v2/version", { token });
      assert.equal(response.status, 401);
      const body = (await response.json()) as { code: string; cause: string; correlationId: string | null };
      assert.equal(body.code, "UNAUTHENTICATED");
      // Canton's category for it redacts details on the API: no reason in the answer.
      assert.equal(body.cause, "The command is missing a (valid) JWT token");
      assert.match(body.correlationId ?? "", /^[0-9a-f]{32}$/);
      const entry = gatewayLog.entries().find((e) => e.correlationId === body.correlationId);
      assert.ok(entry, "a log entry carries the answer's correlation id");
      assert.equal(entry.msg, "token rejected by the gateway");
      assert.match(String(entry.reason), reason);
      assert.ok(!JSON.stringify(entry).includes(token.split(".")[2] as string), "the token is not logged");
    });
  }

  it("refuses a WebSocket upgrade the same way: 401 with a correlation id naming the logged reason", async () => {
    const token = signToken("ws-forger", { key: "wrong-key", audience: AUDIENCE });
    const answer = await upgradeAs(stack.url.replace(/^http/, "ws"), token);
    assert.equal(answer.status, 401);
    const correlationId = String(answer.body?.correlationId);
    assert.match(correlationId, /^[0-9a-f]{32}$/);
    const entry = gatewayLog.entries().find((e) => e.correlationId === correlationId);
    assert.match(String(entry?.reason), /signature/i);
    assert.equal(entry?.route, "GET /v2/updates");
  });

  it("logs no user for a forged token, only a verified one", async () => {
    await stack.request("/v2/version", { token: signToken("forged-subject-1c9e", { key: "wrong-key" }) });
    await stack.request("/v2/version", { token: signToken("participant_admin", { key: SECRET }) });
    const users = gatewayLog.entries().flatMap((e) => (typeof e.user === "string" ? [e.user] : []));
    assert.ok(users.includes("participant_admin"));
    assert.ok(!JSON.stringify(gatewayLog.entries()).includes("forged-subject-1c9e"));
  });
});

describe("the debug log without the gateway's token check (auth.mode none)", () => {
  let stack: Stack;
  const gatewayLog = capturingLogger();
  before(async () => {
    stack = await startStack([], {}, { gatewayLog: gatewayLog.log });
  });
  after(() => stack.stop());

  it("names a token's subject only as unverified: nobody checked its signature", async () => {
    await stack.request("/v2/users", {
      method: "POST",
      body: JSON.stringify({ user: { id: "someone", primaryParty: "", isDeactivated: false } }),
      token: signToken("forged-admin-5b2d", { key: "anything" }),
    });
    const entries = gatewayLog.entries().filter((e) => JSON.stringify(e).includes("forged-admin-5b2d"));
    assert.ok(entries.length > 0, "the request is logged at debug");
    for (const entry of entries) {
      assert.equal(entry.user, undefined, "not logged as the user");
      assert.equal(entry.unverifiedUser, "forged-admin-5b2d");
    }
  });
});
