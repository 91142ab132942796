import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { addProcessMetrics, GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import { mergedWorkerExposition } from "../../src/metrics/worker-metrics.js";

const KNOWN = {
  routes: [{ route: "/livez", method: "GET" }],
  streamEndpoints: ["/v2/updates"],
  grpcMethods: [{ label: "UpdateService/GetUpdates", streaming: true }],
};

const value = (text: string, series: string): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no series ${series}`);
  return Number(line.slice(series.length + 1));
};

/** Two workers' metrics, declared, each having answered one GET /livez. */
function twoWorkersWithARequestEach(): [GatewayMetrics, GatewayMetrics] {
  const workers: [GatewayMetrics, GatewayMetrics] = [
    new GatewayMetrics({ processMetrics: false }),
    new GatewayMetrics({ processMetrics: false }),
  ];
  for (const metrics of workers) {
    metrics.declare(KNOWN);
    metrics.recordHttp("/livez", "GET", 200, 0.001);
  }
  return workers;
}

describe("metrics of several workers", () => {
  it("sums every worker's series without a worker label, keeps per-worker totals, and the process metrics once", async () => {
    const workers = [
      new GatewayMetrics({ processMetrics: false }),
      new GatewayMetrics({ processMetrics: false }),
    ];
    for (const metrics of workers) metrics.declare(KNOWN);
    const [one, two] = workers as [GatewayMetrics, GatewayMetrics];
    for (let i = 0; i < 3; i++) one.recordHttp("/livez", "GET", 200, 0.001);
    for (let i = 0; i < 5; i++) two.recordHttp("/livez", "GET", 200, 0.002);
    two.recordHttp("/livez", "GET", 503, 0.002);
    one.wsStreamsOpen.set({ endpoint: "/v2/updates" }, 2);
    two.wsStreamsOpen.set({ endpoint: "/v2/updates" }, 4);
    // A worker's registry has none of the process metrics: the main thread adds them once.
    assert.equal(
      (await one.registry.getMetricsAsJSON()).some((m) => m.name.startsWith("process_")),
      false,
    );
    const processRegistry = new Registry();
    addProcessMetrics(processRegistry);

    const { text, contentType } = await mergedWorkerExposition(
      await Promise.all(workers.map((m) => m.registry.getMetricsAsJSON())),
      processRegistry,
    );
    assert.equal(contentType, "text/plain; version=0.0.4; charset=utf-8");
    assert.equal(
      value(text, 'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="2xx"}'),
      8,
    );
    assert.equal(
      value(text, 'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="5xx"}'),
      1,
    );
    assert.equal(
      value(text, 'ledger_gateway_http_request_duration_seconds_count{route="/livez",method="GET"}'),
      9,
    );
    assert.equal(value(text, 'ledger_gateway_ws_streams_open{endpoint="/v2/updates"}'), 6);
    assert.equal(value(text, 'ledger_gateway_worker_http_requests_total{worker="1"}'), 3);
    assert.equal(value(text, 'ledger_gateway_worker_http_requests_total{worker="2"}'), 6);
    assert.equal(value(text, 'ledger_gateway_worker_ws_streams_open{worker="2"}'), 4);
    assert.equal(text.split("\n").filter((l) => l.startsWith("process_resident_memory_bytes ")).length, 1);
    assert.equal(
      text.split("\n").filter((l) => l.startsWith("# TYPE nodejs_heap_size_used_bytes ")).length,
      1,
    );
    assert.equal(text.includes("nodejs_active_handles_total"), false);
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="1"}'), 1);
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="2"}'), 1);
  });

  it("reports a worker that did not answer the scrape as down and sums the others", async () => {
    const [, two] = twoWorkersWithARequestEach();
    const { text } = await mergedWorkerExposition(
      [undefined, await two.registry.getMetricsAsJSON()],
      new Registry(),
    );
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="1"}'), 0);
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="2"}'), 1);
    assert.equal(
      value(text, 'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="2xx"}'),
      1,
    );
    assert.equal(text.includes('ledger_gateway_worker_http_requests_total{worker="1"}'), false);
  });

  it("keeps a worker that stopped answering in the sums with what it said last, so no counter drops", async () => {
    const [one, two] = twoWorkersWithARequestEach();
    const lastOfOne = await one.registry.getMetricsAsJSON();
    two.recordHttp("/livez", "GET", 200, 0.001);
    const { text } = await mergedWorkerExposition(
      [lastOfOne, await two.registry.getMetricsAsJSON()],
      new Registry(),
      "prometheus",
      new Set([0]),
    );
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="1"}'), 0);
    assert.equal(value(text, 'ledger_gateway_worker_up{worker="2"}'), 1);
    assert.equal(
      value(text, 'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="2xx"}'),
      3,
    );
  });

  it("merges the subscriber lag as the largest of the workers' maxima and the sum of their sums", async () => {
    const [one, two] = [
      new GatewayMetrics({ processMetrics: false }),
      new GatewayMetrics({ processMetrics: false }),
    ];
    for (const metrics of [one, two]) metrics.declare(KNOWN);
    // A fan-out member 3 offsets behind its upstream, with 100 bytes unread.
    one.trackSubscriber("/v2/updates", { lag: () => ({ bytes: 100, offset: 7, newest: 10 }) });
    // On their own calls: the newest offset the worker saw handed on the endpoint is 20.
    two.trackSubscriber("/v2/updates", { lag: () => ({ bytes: 40, offset: 20 }) });
    two.trackSubscriber("/v2/updates", { lag: () => ({ bytes: 60, offset: 15 }) });
    const { text } = await mergedWorkerExposition(
      [await one.registry.getMetricsAsJSON(), await two.registry.getMetricsAsJSON()],
      new Registry(),
    );
    const endpoint = '{endpoint="/v2/updates"}';
    assert.equal(value(text, `ledger_gateway_subscriber_lag_max_bytes${endpoint}`), 100);
    assert.equal(value(text, `ledger_gateway_subscriber_lag_bytes${endpoint}`), 200);
    assert.equal(value(text, `ledger_gateway_subscriber_lag_max_offsets${endpoint}`), 5);
    assert.equal(value(text, `ledger_gateway_subscriber_lag_offsets${endpoint}`), 8);
  });

  it("keeps, per histogram bucket, the newest exemplar of any worker in OpenMetrics, and none in the Prometheus text", async () => {
    const [one, two] = [
      new GatewayMetrics({ processMetrics: false }),
      new GatewayMetrics({ processMetrics: false }),
    ];
    for (const metrics of [one, two]) metrics.declare(KNOWN);
    const [older, newer, alone] = ["1".repeat(32), "2".repeat(32), "3".repeat(32)];
    one.recordHttp("/livez", "GET", 200, 0.003, older);
    // Exemplars carry the time of their observation in milliseconds: the second is later.
    await new Promise((resolve) => setTimeout(resolve, 5));
    two.recordHttp("/livez", "GET", 200, 0.004, newer);
    one.recordHttp("/livez", "GET", 200, 2, alone);
    const snapshots = await Promise.all([one.snapshot(), two.snapshot()]);
    const merged = await mergedWorkerExposition(snapshots, new Registry(), "openmetrics");
    assert.equal(merged.contentType, "application/openmetrics-text; version=1.0.0; charset=utf-8");
    assert.ok(merged.text.endsWith("\n# EOF\n"));
    const bucket = (le: string) =>
      merged.text
        .split("\n")
        .find((l) =>
          l.startsWith(
            `ledger_gateway_http_request_duration_seconds_bucket{le="${le}",route="/livez",method="GET"} `,
          ),
        );
    assert.match(bucket("0.005") ?? "", new RegExp(` 2 # \\{trace_id="${newer}"\\} 0\\.004 `));
    assert.match(bucket("2.5") ?? "", new RegExp(` 3 # \\{trace_id="${alone}"\\} 2 `));
    assert.ok(!(bucket("0.001") ?? "").includes("#"));
    assert.equal(value(merged.text, 'ledger_gateway_worker_up{worker="2"}'), 1);
    assert.equal(
      value(
        merged.text,
        'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="2xx"}',
      ),
      3,
    );

    const plain = await mergedWorkerExposition(snapshots, new Registry());
    assert.equal(plain.contentType, "text/plain; version=0.0.4; charset=utf-8");
    assert.ok(!plain.text.includes("trace_id"));
    assert.ok(plain.text.includes("# TYPE ledger_gateway_http_requests_total counter"));
  });

  it("says the ledger is ready only when every worker's probe got an answer", async () => {
    const probed = [true, false].map((ready) => {
      const metrics = new GatewayMetrics({ processMetrics: false });
      metrics.probeLedger(async () => ready);
      return metrics;
    });
    const both = await Promise.all(probed.map((m) => m.registry.getMetricsAsJSON()));
    assert.equal(
      value((await mergedWorkerExposition(both, new Registry())).text, "ledger_gateway_ledger_ready"),
      0,
    );
    const first = both.slice(0, 1);
    assert.equal(
      value((await mergedWorkerExposition(first, new Registry())).text, "ledger_gateway_ledger_ready"),
      1,
    );
  });
});
