import assert from "node:assert/strict";
import type { ServerHttp2Stream } from "node:http2";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { answerOk, LEDGER_END_5, startWireLedger, type WireLedger } from "../ledger/wire-ledger.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, createIouTransaction, upgradeAs, userFor } from "./ledger-client.js";
import { openStream } from "./open-stream.js";

const API = "com.daml.ledger.api.v2";
/** HealthCheckResponse{status: SERVING}, framed. */
const SERVING = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);
/** GetLedgerApiVersionResponse{version: "3.5.0"}, framed. */
const VERSION = Buffer.concat([Buffer.from([0, 0, 0, 0, 7, 0x0a, 5]), Buffer.from("3.5.0")]);

/** A well-formed Ledger API token of about `bytes` characters (a large claim, as some IdPs mint). */
const tokenOf = (bytes: number) => tokenFor("participant_admin", { padding: "p".repeat(bytes) });

/** Canton's JSON shape of the refusal, the cause's numbers left to `cause`. */
const refusal = (cause: RegExp) => ({
  code: "REQUEST_HEADERS_TOO_LARGE",
  cause,
  correlationId: null,
  traceId: "(the request's)",
  context: {},
  resources: [],
  errorCategory: 8,
  grpcCodeValue: 3,
  retryInfo: null,
  definiteAnswer: null,
});

function assertRefusal(status: number, body: unknown, cause: RegExp): void {
  assert.equal(status, 431, JSON.stringify(body));
  const { cause: text, traceId, ...rest } = body as { cause: string; traceId: unknown };
  const { cause: _, traceId: __, ...expected } = refusal(cause);
  assert.deepEqual(rest, expected);
  // The gateway's own error names the request's trace (a fresh one: the request sent none).
  assert.match(String(traceId), /^[0-9a-f]{32}$/);
  assert.match(text, cause);
  assert.ok(!text.includes("ppppp"), "the token is not in the answer");
}

/**
 * Issue 20 item 4: no request can take the shared ledger connection down. The gateway in front
 * of a ledger that announces a 4 KiB header limit (SETTINGS_MAX_HEADER_LIST_SIZE): a token that
 * would exceed it is answered 431 by the gateway, the ledger never sees the call, and the calls
 * sharing the connection go on.
 */
describe("the gateway refuses headers over the ledger's announced limit (wire-level ledger)", () => {
  let ledger: WireLedger;
  let gateway: RunningGateway;
  let base: string;
  const held: ServerHttp2Stream[] = [];
  let hold = false;

  before(async () => {
    ledger = await startWireLedger({ maxHeaderListSize: 4096 });
    ledger.answer = (stream, headers) => {
      const path = headers[":path"];
      if (path === "/grpc.health.v1.Health/Check") answerOk(stream, SERVING);
      else if (path === `/${API}.VersionService/GetLedgerApiVersion`) answerOk(stream, VERSION);
      else if (hold) held.push(stream);
      else answerOk(stream, LEDGER_END_5);
    };
    gateway = await startGateway(
      loadConfig({ argv: ["--port", "0"], env: {} }),
      { host: "127.0.0.1", port: ledger.port },
      pino({ level: "silent" }),
    );
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway.stop(1_000);
    ledger.close();
  });

  const ledgerEnd = async (token: string) => {
    const res = await fetch(`${base}/v2/state/ledger-end`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const callsWith = (token: string) =>
    ledger.streams.filter(({ headers }) => headers.authorization === `Bearer ${token}`).length;

  it("answers 431 to a 16 KB and a 6 KB token, sends neither, and a request in flight is answered", async () => {
    assert.deepEqual(await ledgerEnd(tokenOf(10)), { status: 200, body: { offset: 5 } });
    const connections = ledger.connections;
    hold = true;
    const inFlight = ledgerEnd(tokenOf(10));
    await until(() => held.length > 0);
    hold = false;

    for (const bytes of [16 * 1024, 6 * 1024]) {
      const token = tokenOf(bytes);
      const { status, body } = await ledgerEnd(token);
      assertRefusal(
        status,
        body,
        /^Request metadata too large: the call's headers, the token included, take \d+ bytes as HPACK counts them, over the ledger's limit of 4096 bytes \(the ledger's SETTINGS_MAX_HEADER_LIST_SIZE\)$/,
      );
      assert.equal(callsWith(token), 0, `the ledger saw no call with the ${bytes}-byte token`);
    }

    answerOk(held[0] as ServerHttp2Stream, LEDGER_END_5);
    assert.deepEqual(await inFlight, { status: 200, body: { offset: 5 } });
    assert.deepEqual(await ledgerEnd(tokenOf(10)), { status: 200, body: { offset: 5 } });
    assert.equal(ledger.connections, connections, "one ledger connection throughout");
    const { text } = (await gateway.metrics?.exposition()) ?? { text: "" };
    assert.match(text, /^ledger_gateway_ledger_refused_calls_total\{reason="metadata_too_large"\} 2$/m);
  });

  it("refuses a WebSocket upgrade with a 16 KB token the same way, before any socket", async () => {
    const token = tokenOf(16 * 1024);
    const answer = await upgradeAs(`ws://127.0.0.1:${gateway.port}`, token);
    assertRefusal(answer.status, answer.body, /over the ledger's limit of 4096 bytes/);
    assert.equal(callsWith(token), 0, "the ledger saw no admission call");
  });
});

/**
 * The default limit (ledger.max-metadata-bytes, 8 KiB: Canton's max-inbound-metadata-size)
 * against the sandbox, whose own limit is larger: tokens of 8 and 16 KB are refused by the
 * gateway, and another user's open stream keeps delivering.
 */
describe("the gateway keeps to ledger.max-metadata-bytes, 8 KiB by default (real sandbox)", () => {
  let stack: Stack;
  let alice: string;
  let aliceToken: string;

  before(async () => {
    stack = await startStack();
    alice = await allocate(stack, "alice");
    aliceToken = await userFor(stack, "alice", [alice]);
  });
  after(() => stack.stop());

  it("answers 431 over HTTP and on the upgrade; an open stream on the same gateway goes on", async () => {
    const open = await openStream(stack, "/v2/updates", updatesRequest(partyFilter(alice)), aliceToken);
    try {
      for (const bytes of [8 * 1024, 16 * 1024]) {
        const token = tokenOf(bytes);
        const res = await stack.request("/v2/state/ledger-end", { token });
        assertRefusal(
          res.status,
          await res.json(),
          /over the ledger's limit of 8192 bytes \(ledger\.max-metadata-bytes\)$/,
        );
        const answer = await upgradeAs(stack.url.replace(/^http/, "ws"), token);
        assertRefusal(answer.status, answer.body, /over the ledger's limit of 8192 bytes/);
      }
      const created = await createIouTransaction(stack, aliceToken, "after-refusals", {
        issuer: alice,
        owner: alice,
        currency: "EUR",
        amount: "1",
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const updateId = created.body.transaction.updateId as string;
      await open.waitFor((frames) => JSON.stringify(frames).includes(updateId));
    } finally {
      open.close();
    }
  });
});
