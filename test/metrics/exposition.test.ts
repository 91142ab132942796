import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expositionFormatOf } from "../../src/metrics/exposition-format.js";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";

/** What Prometheus 2.x and 3.x send by default. */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const OTHER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const KNOWN = {
  routes: [{ route: "/v2/version", method: "GET" }],
  streamEndpoints: ["/v2/updates"],
  grpcMethods: [{ label: "VersionService/GetLedgerApiVersion", streaming: false }],
};

const lineOf = (text: string, series: string): string | undefined =>
  text.split("\n").find((line) => line.startsWith(`${series} `));

/** A gateway's metrics with one request and one ledger call of `traceId` (null: none), lasting 3 ms each. */
function observed(traceId: string | null = TRACE): GatewayMetrics {
  const metrics = new GatewayMetrics({ processMetrics: false });
  metrics.declare(KNOWN);
  metrics.recordHttp("/v2/version", "GET", 200, 0.003, traceId ?? undefined);
  const call = metrics.ledgerCalls()({
    service: "VersionService",
    method: "GetLedgerApiVersion",
    streaming: false,
    trace: traceId === null ? undefined : { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, traceId },
    sentBytes: 5,
  });
  call.end({ code: "OK", seconds: 0.003, receivedBytes: 10 });
  return metrics;
}

describe("the exposition format a scraper asks for", () => {
  it("is OpenMetrics for Prometheus' default Accept and for OpenMetrics alone", () => {
    assert.equal(expositionFormatOf(PROMETHEUS_ACCEPT), "openmetrics");
    assert.equal(expositionFormatOf("application/openmetrics-text"), "openmetrics");
    assert.equal(
      expositionFormatOf("Application/OpenMetrics-Text; version=1.0.0; charset=utf-8"),
      "openmetrics",
    );
  });

  it("is the Prometheus text for any other Accept", () => {
    for (const accept of [
      "",
      "*/*",
      "text/plain",
      "text/plain;version=0.0.4",
      "application/json",
      "application/openmetrics-text;q=0",
      "application/openmetrics-text;version=0.0.1",
      "text/plain;q=1,application/openmetrics-text;version=1.0.0;q=0.5",
    ])
      assert.equal(expositionFormatOf(accept), "prometheus", accept);
  });
});

describe("OpenMetrics exposition", () => {
  it("writes OpenMetrics 1.0: its Content-Type, counters' samples with _total, # EOF at the end", async () => {
    const { contentType, text } = await observed().exposition("openmetrics");
    assert.equal(contentType, "application/openmetrics-text; version=1.0.0; charset=utf-8");
    assert.ok(text.endsWith("\n# EOF\n"), text.slice(-40));
    assert.ok(text.includes("# TYPE ledger_gateway_http_requests counter\n"));
    assert.equal(
      lineOf(text, 'ledger_gateway_http_requests_total{route="/v2/version",method="GET",status_class="2xx"}'),
      'ledger_gateway_http_requests_total{route="/v2/version",method="GET",status_class="2xx"} 1',
    );
    assert.ok(!text.includes("\n\n"), "no blank lines in OpenMetrics");
  });

  it("puts the trace of an observation on its bucket's line as an exemplar, and on no other", async () => {
    const { text } = await observed().exposition("openmetrics");
    for (const [bucket, labels] of [
      ["ledger_gateway_http_request_duration_seconds_bucket", 'route="/v2/version",method="GET"'] as const,
      [
        "ledger_gateway_grpc_client_call_duration_seconds_bucket",
        'method="VersionService/GetLedgerApiVersion",code="OK"',
      ] as const,
    ]) {
      const line = lineOf(text, `${bucket}{le="0.005",${labels}}`);
      assert.match(
        line ?? "",
        new RegExp(` 1 # \\{trace_id="${TRACE}"\\} 0\\.003 \\d+(\\.\\d+)?$`),
        `${line}`,
      );
      const others = text.split("\n").filter((l) => l.startsWith(bucket) && l.includes(" # {"));
      assert.deepEqual(others, [line]);
    }
  });

  it("has no exemplar for an observation without a trace", async () => {
    const { text } = await observed(null).exposition("openmetrics");
    assert.ok(!text.includes(" # {"));
  });

  it("leaves the Prometheus text as it was: same Content-Type, no exemplars, counters still named _total", async () => {
    const metrics = observed();
    const before = await metrics.exposition();
    await metrics.exposition("openmetrics");
    const after = await metrics.exposition();
    assert.equal(after.contentType, "text/plain; version=0.0.4; charset=utf-8");
    assert.equal(after.text, before.text);
    assert.ok(!after.text.includes("# {"));
    assert.ok(after.text.includes("# TYPE ledger_gateway_http_requests_total counter\n"));
  });

  it("serves overlapping scrapes of both formats each in its own, while a collect waits", async () => {
    const metrics = observed();
    // The ledger probe is the one collect that waits: scrapes overlap across it.
    metrics.probeLedger(() => new Promise((resolve) => setTimeout(() => resolve(true), 20)));
    const formats = [
      "openmetrics",
      "prometheus",
      "openmetrics",
      "prometheus",
      "prometheus",
      "openmetrics",
    ] as const;
    const answers = await Promise.all(formats.map((format) => metrics.exposition(format)));
    answers.forEach(({ contentType, text }, i) => {
      const openMetrics = formats[i] === "openmetrics";
      assert.equal(contentType.startsWith("application/openmetrics-text"), openMetrics);
      assert.equal(text.endsWith("# EOF\n"), openMetrics);
      assert.equal(text.includes(`# {trace_id="${TRACE}"}`), openMetrics);
      assert.ok(text.includes("ledger_gateway_http_requests_total{"));
      assert.equal(lineOf(text, "ledger_gateway_ledger_ready"), "ledger_gateway_ledger_ready 1");
    });
  });

  it("keeps the newest exemplar of a bucket", async () => {
    const metrics = observed();
    await new Promise((resolve) => setTimeout(resolve, 2));
    metrics.recordHttp("/v2/version", "GET", 200, 0.004, OTHER_TRACE);
    const { text } = await metrics.exposition("openmetrics");
    const line = lineOf(
      text,
      'ledger_gateway_http_request_duration_seconds_bucket{le="0.005",route="/v2/version",method="GET"}',
    );
    assert.match(line ?? "", new RegExp(` 2 # \\{trace_id="${OTHER_TRACE}"\\} 0\\.004 `));
  });

  it("writes no exemplar for a trace id that is not one (it would fail the whole scrape)", async () => {
    const metrics = observed(null);
    metrics.recordHttp("/v2/version", "GET", 200, 0.003, `${"x".repeat(200)}"`);
    const { text } = await metrics.exposition("openmetrics");
    assert.ok(!text.includes(" # {"));
  });
});
