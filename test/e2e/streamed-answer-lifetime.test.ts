import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, call, createIouTransaction, userFor } from "./ledger-client.js";
import { StreamedReader } from "./streamed-reader.js";

/** Past uWS's 10 s HTTP timeout, which cut streamed answers on 9c6ba21 (issue 35). */
const LIVES_MS = 15_000;

/**
 * How long a streamed list twin answer (NDJSON, server-sent events) lives, over the real gateway
 * and sandbox: as long as its idle timeout and `limit` say, whoever else would cut it.
 */
describe("streamed answers live as long as their idle timeout says", () => {
  let stack: Stack;
  let busy: string;
  let quiet: string;
  /** A user that acts as both parties (and so reads them). */
  let token: string;
  let commands = 0;
  const commit = async (): Promise<string> => {
    commands += 1;
    const reply = await createIouTransaction(stack, token, `lifetime-${commands}`, {
      issuer: busy,
      owner: busy,
      currency: "EUR",
      amount: String(commands),
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.transaction.updateId as string;
  };
  const ledgerEnd = async (): Promise<number> =>
    (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
  const idleEnds = (transport: string) =>
    gatewayMetric(
      stack.url,
      "ledger_gateway_stream_ends_total",
      'endpoint="/v2/updates"',
      `transport="${transport}"`,
      'reason="idle"',
    );

  before(async () => {
    stack = await startStack();
    busy = await allocate(stack, "busy");
    quiet = await allocate(stack, "quiet");
    token = await userFor(stack, "lifetime", [busy, quiet]);
  });
  after(() => stack.stop());

  it("delivers past 15 s to NDJSON and SSE readers of a transaction a second under stream_idle_timeout_ms=60000", {
    timeout: 90_000,
  }, async () => {
    const request = updatesRequest(partyFilter(busy), await ledgerEnd());
    const path = "/v2/updates?stream_idle_timeout_ms=60000";
    const readers = [
      new StreamedReader(stack, path, request, token, "ndjson"),
      new StreamedReader(stack, path, request, token, "sse"),
    ];
    const started = performance.now();
    const committed: string[] = [];
    while (performance.now() - started < LIVES_MS) {
      committed.push(await commit());
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const last = await commit();
    committed.push(last);
    for (const reader of readers) {
      await reader.received(last);
      assert.equal(reader.status, 200);
      assert.equal(reader.done, false, "still open");
      assert.deepEqual(reader.updateIds, committed);
      reader.close();
    }
  });

  it("ends an idle answer at its stream_idle_timeout_ms, past uWS's timeout, with its last chunk", {
    timeout: 60_000,
  }, async () => {
    const idleMs = 12_000;
    const before = await idleEnds("ndjson");
    const request = updatesRequest(partyFilter(quiet), await ledgerEnd());
    const reader = new StreamedReader(
      stack,
      `/v2/updates?stream_idle_timeout_ms=${idleMs}`,
      request,
      token,
      "ndjson",
    );
    const end = await reader.ended;
    assert.equal(end.status, 200);
    assert.equal(end.complete, true, "ended by the gateway, not cut");
    assert.ok(end.afterMs >= idleMs, `ended after ${Math.round(end.afterMs)} ms, before its idle timeout`);
    assert.deepEqual(reader.updateIds, []);
    await until(async () => (await idleEnds("ndjson")) === before + 1);
  });

  it("answers the list (one JSON array) after a stream_idle_timeout_ms past uWS's timeout too", {
    timeout: 60_000,
  }, async () => {
    const reply = await call<unknown[]>(
      stack,
      "POST",
      "/v2/updates?stream_idle_timeout_ms=12000",
      updatesRequest(partyFilter(quiet), await ledgerEnd()),
      token,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.ok(Array.isArray(reply.body), JSON.stringify(reply.body));
  });

  it("ends an open-ended answer with no idle timeout given after the configured list wait", {
    timeout: 30_000,
  }, async () => {
    const before = await idleEnds("sse");
    const reader = new StreamedReader(
      stack,
      "/v2/updates",
      updatesRequest(partyFilter(quiet), await ledgerEnd()),
      token,
      "sse",
    );
    const end = await reader.ended;
    assert.equal(end.status, 200);
    assert.equal(end.complete, true);
    assert.deepEqual(reader.updateIds, []);
    await until(async () => (await idleEnds("sse")) === before + 1);
  });
});

describe("a streamed answer's client that takes nothing", () => {
  let stack: Stack;
  let party: string;

  before(async () => {
    // 16 MiB: more than loopback's socket buffers hold, so writes wait for the client.
    stack = await startStack(
      [],
      {},
      { sandbox: { preload: { ticks: 1000, payloadBytes: 16 * 1024, party: "hoard" } } },
    );
    const { participantId } = (await (await stack.request("/v2/parties/participant-id")).json()) as {
      participantId: string;
    };
    // The preload allocates its owner on the participant's own namespace.
    party = `hoard::${participantId.split("::")[1]}`;
  });
  after(() => stack.stop());

  it("is still cut by uWS, long before its idle timeout, and its stream ends", {
    timeout: 120_000,
  }, async () => {
    const unsubscribed = () =>
      gatewayMetric(
        stack.url,
        "ledger_gateway_stream_ends_total",
        'endpoint="/v2/updates"',
        'transport="ndjson"',
        'reason="unsubscribed"',
      );
    const before = await unsubscribed();
    const reader = new StreamedReader(
      stack,
      "/v2/updates?stream_idle_timeout_ms=600000",
      updatesRequest(partyFilter(party), 0),
      tokenFor(`actAs-${party}`),
      "ndjson",
      { takesNothing: true },
    );
    // The client reads nothing, so it may never see the close: the gateway's end is what counts.
    await until(async () => (await unsubscribed()) === before + 1, { budgetMs: 90_000 });
    assert.equal(reader.status, 200);
    assert.equal(reader.elements.length, 0);
    reader.close();
  });
});
