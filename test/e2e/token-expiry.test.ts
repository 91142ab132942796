import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";
import { waitFor } from "../support/transport-harness.js";
import { updatesRequest } from "../support/update-requests.js";
import { call, wildcard } from "./ledger-client.js";

const SECRET = "token-expiry-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;
const javaInstant = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/**
 * A stream outlives its token through the gateway, over real sockets: gateway + sandbox in HS256
 * mode, where the sandbox does what Canton's Ledger API does (ACCESS_TOKEN_EXPIRED at the expiry,
 * max-token-lifetime at admission).
 */
describe("streams whose token expires, through the gateway (sandbox in HS256 mode)", () => {
  let stack: Stack;
  let party: string;
  let end: number;
  const token = (user: string, exp?: number) =>
    signToken(user, { key: SECRET, ...(exp === undefined ? {} : { exp }) });

  before(async () => {
    stack = await startStack(
      [],
      {},
      { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
    );
    const admin = token("participant_admin");
    party = (
      await call<{ partyDetails: { party: string } }>(
        stack,
        "POST",
        "/v2/parties",
        { partyIdHint: "expiry" },
        admin,
      )
    ).body.partyDetails.party;
    const rights = [{ kind: { CanReadAs: { value: { party } } } }];
    const created = await call(stack, "POST", "/v2/users", { user: { id: "expiry-reader" }, rights }, admin);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, admin)).body
      .offset;
  });
  after(() => stack.stop());

  it("refuses a 10-minute token (Canton's max-token-lifetime is 5 minutes)", async () => {
    const refused = await call(
      stack,
      "GET",
      "/v2/state/ledger-end",
      undefined,
      token("expiry-reader", inSeconds(600)),
    );
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    const served = await call(
      stack,
      "GET",
      "/v2/state/ledger-end",
      undefined,
      token("expiry-reader", inSeconds(290)),
    );
    assert.equal(served.status, 200, JSON.stringify(served.body));
  });

  it("ends a WebSocket update stream opened with a 3-second token with ACCESS_TOKEN_EXPIRED at the expiry", {
    timeout: 30_000,
  }, async () => {
    const exp = inSeconds(3);
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token("expiry-reader", exp)}`,
    ]);
    const frames: Record<string, unknown>[] = [];
    socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
    socket.on("open", () => socket.send(JSON.stringify(updatesRequest(wildcard([party]), end))));
    const code = await new Promise<number>((resolve) =>
      socket.on("close", (closeCode) => resolve(closeCode)),
    );

    assert.equal(code, 1000);
    const last = frames.at(-1) ?? {};
    assert.equal(last.code, "ACCESS_TOKEN_EXPIRED", JSON.stringify(frames));
    const [, validUntil, now] =
      /^Claims were valid until (\S+), current time is (\S+)$/.exec(String(last.cause)) ?? [];
    assert.equal(validUntil, javaInstant(exp * 1000));
    assert.ok(Date.parse(now ?? "") >= exp * 1000, `ended at ${now}, before ${validUntil}`);
    assert.equal(last.errorCategory, 2);
    assert.equal(last.grpcCodeValue, 10);
    await waitFor("the ledger call to end", () => stack.sandbox.calls.open("UpdateService/GetUpdates") === 0);
  });

  it("ends a list twin that would wait longer than its token lives with the ledger's ACCESS_TOKEN_EXPIRED", {
    timeout: 60_000,
  }, async () => {
    const exp = inSeconds(3);
    const reply = await call<Record<string, unknown>>(
      stack,
      "POST",
      "/v2/updates?stream_idle_timeout_ms=20000",
      updatesRequest(wildcard([party]), end),
      token("expiry-reader", exp),
    );
    assert.equal(reply.status, 409, JSON.stringify(reply.body));
    assert.equal(reply.body.code, "ACCESS_TOKEN_EXPIRED");
    assert.match(
      String(reply.body.cause),
      new RegExp(`^Claims were valid until ${javaInstant(exp * 1000)},`),
    );
    // The ledger's error passed on (it names the participant that ended the call), or the
    // reader's own gate's at the same `exp`, whichever came first: the same code and cause.
    const participant = (reply.body.context as Record<string, string>).participant;
    assert.ok(participant === undefined || participant === "sandbox", JSON.stringify(reply.body));
  });
});
