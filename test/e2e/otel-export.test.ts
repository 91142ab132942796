import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { capturingLogger } from "../support/capturing-logger.js";
import { GATEWAY_CLI, listeningPort } from "../support/gateway-cli.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, userFor } from "./ledger-client.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

/** A trace with this client's id and `traceparent`, span id and sampled flag of its own. */
const traceparentOf = (traceId: string) => `00-${traceId}-${CLIENT_SPAN}-01`;

/**
 * The OpenTelemetry SDK reads its configuration from process.env (as in production: the standard
 * OTEL_* variables), so each gateway here is started after setting them; the SDK's batch delay is
 * cut so that spans arrive within the test.
 */
function exportTo(receiver: OtlpReceiver, protocol: "http/protobuf" | "http/json"): void {
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: "gateway-under-test",
    OTEL_TRACES_SAMPLER: "always_on",
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
}

const byName = (spans: ReceivedSpan[], name: string) => spans.find((span) => span.name === name);

/** Issue 21 item 2: the gateway's spans, exported over OTLP/HTTP, under the client's trace. */
describe("span export with OTEL_TRACES_EXPORTER=otlp (OTLP/HTTP protobuf)", () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  const sandboxLog = capturingLogger();
  before(async () => {
    receiver = await startOtlpReceiver();
    exportTo(receiver, "http/protobuf");
    stack = await startStack([], {}, { sandbox: { log: sandboxLog.log } });
  });
  after(async () => {
    await stack.stop();
    await receiver.close();
  });

  it("exports the request's span and its failing ledger call's under the client's trace, linked", async () => {
    const reply = await stack.request("/v2/users/nosuchuser", { headers: { traceparent: TRACEPARENT } });
    const body = (await reply.json()) as { code: string; traceId: string };
    assert.equal(reply.status, 404);
    assert.deepEqual(
      { code: body.code, traceId: body.traceId },
      { code: "USER_NOT_FOUND", traceId: TRACE_ID },
    );

    const spans = await receiver.trace(TRACE_ID, (found) => found.length >= 2);
    const request = byName(spans, "GET /v2/users/{user-id}");
    const call = byName(spans, "com.daml.ledger.api.v2.admin.UserManagementService/GetUser");
    assert.ok(request && call, JSON.stringify(spans.map((s) => s.name)));
    assert.equal(request.kind, SERVER);
    assert.equal(request.parentSpanId, CLIENT_SPAN);
    assert.deepEqual(
      {
        method: request.attributes["http.request.method"],
        route: request.attributes["http.route"],
        status: request.attributes["http.response.status_code"],
        user: request.attributes["enduser.id"],
      },
      { method: "GET", route: "/v2/users/{user-id}", status: 404, user: "participant_admin" },
    );
    // A 404 is the client's fault, not the server span's.
    assert.notEqual(request.status.code, STATUS_ERROR);
    assert.equal(request.resource["service.name"], "gateway-under-test");

    assert.equal(call.kind, CLIENT);
    assert.equal(call.parentSpanId, request.spanId);
    assert.equal(call.attributes["rpc.system"], "grpc");
    assert.equal(call.attributes["rpc.grpc.status_code"], 5);
    assert.ok((call.attributes["ledger_gateway.call.sent_bytes"] as number) > 5);
    assert.deepEqual(call.status, { code: STATUS_ERROR, message: "NOT_FOUND" });

    // The token is a secret: in no attribute of any span.
    for (const span of receiver.spans)
      for (const value of Object.values(span.attributes)) assert.ok(!String(value).includes(stack.token));
    // The ledger (the sandbox) logged the call under the same trace.
    assert.ok(
      sandboxLog.entries().some((entry) => entry.tid === TRACE_ID),
      "the sandbox's log names the client's trace",
    );
  });

  it("starts a trace of its own for a request without one, and names it in the error body", async () => {
    const reply = await stack.request("/v2/users/nosuchuser");
    const { traceId } = (await reply.json()) as { traceId: string };
    const spans = await receiver.trace(traceId, (found) => found.length >= 2);
    const request = byName(spans, "GET /v2/users/{user-id}");
    assert.equal(request?.parentSpanId, "");
    assert.equal(
      byName(spans, "com.daml.ledger.api.v2.admin.UserManagementService/GetUser")?.parentSpanId,
      request?.spanId,
    );
  });

  it("exports a WebSocket subscription's span, its events, and its ledger calls as its children", async () => {
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
    const reader = await allocate(stack, "otelReader");
    const token = await userFor(stack, "otel-reader", [], [reader]);
    const socket = new WebSocket(
      `${stack.url.replace(/^http/, "ws")}/v2/updates`,
      ["daml.ws.auth", `jwt.token.${token}`],
      { headers: { traceparent: traceparentOf(traceId) } },
    );
    const closed = once(socket, "close");
    const frames: string[] = [];
    socket.on("message", (data: Buffer) => frames.push(data.toString()));
    await once(socket, "open");
    socket.send(JSON.stringify(updatesRequest(partyFilter(reader), 0)));
    // Once the upgrade's admission call came back (its span did), a token renewal, accepted.
    await receiver.trace(traceId, (found) => found.some((span) => span.name.endsWith("/GetUpdates")));
    const accepted = () =>
      gatewayMetric(stack.url, "ledger_gateway_ws_token_renewals_total", 'outcome="accepted"');
    const before = await accepted();
    socket.send(JSON.stringify({ token: tokenFor("otel-reader") }));
    await until(async () => (await accepted()) !== before);
    socket.close(1000);
    await closed;

    const spans = await receiver.trace(
      traceId,
      (found) => byName(found, "WebSocket /v2/updates") !== undefined,
    );
    const subscription = byName(spans, "WebSocket /v2/updates") as ReceivedSpan;
    assert.equal(subscription.kind, SERVER);
    assert.equal(subscription.parentSpanId, CLIENT_SPAN);
    assert.deepEqual(
      {
        endpoint: subscription.attributes["ledger_gateway.stream.endpoint"],
        upstream: subscription.attributes["ledger_gateway.stream.upstream"],
        reason: subscription.attributes["ledger_gateway.stream.end_reason"],
        code: subscription.attributes["ledger_gateway.stream.close_code"],
        user: subscription.attributes["enduser.id"],
      },
      {
        endpoint: "/v2/updates",
        upstream: "shared",
        reason: "unsubscribed",
        code: 1000,
        user: "otel-reader",
      },
    );
    assert.equal(typeof subscription.attributes["ledger_gateway.stream.elements"], "number");
    const events = subscription.events.map((event) => `${event.name} ${JSON.stringify(event.attributes)}`);
    assert.ok(events.includes('admission {"outcome":"admitted","at":"upgrade"}'), events.join("; "));
    assert.ok(events.includes('fanout.join {"how":"direct"}'), events.join("; "));
    assert.ok(events.includes('renewal {"outcome":"accepted"}'), events.join("; "));
    // Its ledger calls (the upgrade's admission, the stream, the renewal's check) are its children.
    const calls = spans.filter((span) => span.kind === CLIENT);
    assert.ok(
      calls.some((call) => call.name === "com.daml.ledger.api.v2.UpdateService/GetUpdates"),
      JSON.stringify(calls.map((c) => c.name)),
    );
    for (const call of calls) assert.equal(call.parentSpanId, subscription.spanId, call.name);
  });
});

describe("span export over OTLP/HTTP JSON, from the worker threads of the gateway's command", () => {
  let receiver: OtlpReceiver;
  let gateway: ChildProcess;
  let port: number;
  before(async () => {
    receiver = await startOtlpReceiver();
    exportTo(receiver, "http/json");
    gateway = spawn(process.execPath, [...GATEWAY_CLI, "--port", "0", "--server.workers", "2"], {
      stdio: ["ignore", "pipe", "inherit"],
      env: process.env,
    });
    port = await listeningPort(gateway);
  });
  after(async () => {
    gateway.kill("SIGTERM");
    await once(gateway, "exit");
    await receiver.close();
  });

  it("sends the spans of requests served by either worker, as JSON", async () => {
    const traceIds = Array.from(
      { length: 24 },
      (_, i) => `6bf92f3577b34da6a3ce929d0e0e47${String(i).padStart(2, "0")}`,
    );
    for (const traceId of traceIds) {
      // A connection each (no keep-alive), so that the kernel spreads them over the workers.
      const reply = await fetch(`http://127.0.0.1:${port}/v2/version`, {
        headers: {
          traceparent: traceparentOf(traceId),
          authorization: `Bearer ${tokenFor()}`,
          connection: "close",
        },
      });
      assert.equal(reply.status, 200);
    }
    for (const traceId of traceIds) {
      const spans = await receiver.trace(traceId, (found) => found.length >= 2);
      const request = byName(spans, "GET /v2/version");
      assert.equal(request?.attributes["http.response.status_code"], 200);
      assert.equal(
        byName(spans, "com.daml.ledger.api.v2.VersionService/GetLedgerApiVersion")?.parentSpanId,
        request?.spanId,
      );
    }
    assert.ok(receiver.contentTypes.length > 0);
    assert.ok(receiver.contentTypes.every((type) => type.startsWith("application/json")));
    // Each worker thread has its own exporter: their requests come in separately, at least one each.
    const senders = new Set(receiver.spans.map((span) => span.resource["ledger_gateway.worker"]));
    assert.deepEqual([...senders].sort(), [1, 2]);
  });
});
