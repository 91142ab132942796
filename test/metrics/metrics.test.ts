import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { STREAM_END_REASONS } from "../../src/errors/index.js";
import { DROPPED_DEFAULT_METRICS } from "../../src/metrics/gateway-metrics.js";
import { debianBinary } from "../deploy/debian-package.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

const STREAM_ENDPOINTS = [
  "/v2/updates",
  "/v2/updates/flats",
  "/v2/updates/trees",
  "/v2/commands/completions",
  "/v2/commands/command-completions",
  "/v2/state/active-contracts",
];

/** The value of one series of an exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const promtool = await debianBinary("promtool", "prometheus");

/** What Prometheus sends by default: OpenMetrics first. */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe("/metrics", () => {
  let stack: Stack;
  let firstScrape: Response;
  let first: string;
  before(async () => {
    stack = await startStack();
    // Scraped before any other request: what Prometheus sees of a gateway that just started.
    firstScrape = await stack.request("/metrics", { token: null });
    first = await firstScrape.text();
  });
  after(() => stack.stop());

  it("answers with the exposition format's Content-Type and version", () => {
    assert.equal(firstScrape.status, 200);
    assert.equal(firstScrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  });

  it("has every series whose labels are known at zero before the first event", () => {
    for (const endpoint of STREAM_ENDPOINTS) {
      assert.equal(sample(first, `ledger_gateway_ws_backpressure_pauses_total{endpoint="${endpoint}"}`), 0);
      assert.equal(sample(first, `ledger_gateway_ws_streams_open{endpoint="${endpoint}"}`), 0);
      assert.equal(sample(first, `ledger_gateway_ws_closes_total{endpoint="${endpoint}",code="1008"}`), 0);
      assert.equal(sample(first, `ledger_gateway_ws_upgrades_lost_in_cork_total{endpoint="${endpoint}"}`), 0);
      for (const transport of ["ws", "http"]) {
        assert.equal(
          sample(
            first,
            `ledger_gateway_stream_elements_sent_total{endpoint="${endpoint}",transport="${transport}"}`,
          ),
          0,
        );
        for (const reason of STREAM_END_REASONS) {
          const labels = `endpoint="${endpoint}",transport="${transport}",reason="${reason}"`;
          assert.equal(sample(first, `ledger_gateway_stream_ends_total{${labels}}`), 0, labels);
          assert.equal(sample(first, `ledger_gateway_stream_duration_seconds_count{${labels}}`), 0, labels);
        }
      }
    }
    for (const statusClass of ["2xx", "4xx", "5xx"]) {
      assert.equal(
        sample(
          first,
          `ledger_gateway_http_requests_total{route="/v2/parties/{party}",method="GET",status_class="${statusClass}"}`,
        ),
        0,
      );
    }
    assert.equal(
      sample(first, 'ledger_gateway_http_request_duration_seconds_count{route="/v2/version",method="GET"}'),
      0,
    );
    assert.equal(
      sample(first, 'ledger_gateway_http_requests_total{route="unmatched",method="GET",status_class="4xx"}'),
      0,
    );
    assert.equal(
      sample(
        first,
        'ledger_gateway_grpc_client_call_duration_seconds_count{method="admin.PartyManagementService/AllocateParty",code="OK"}',
      ),
      0,
    );
  });

  it("says the ledger is ready and no ledger stream is open, every streaming method at zero", () => {
    assert.equal(sample(first, "ledger_gateway_ledger_ready"), 1);
    for (const method of ["UpdateService/GetUpdates", "CommandCompletionService/CompletionStream"])
      assert.equal(sample(first, `ledger_gateway_ledger_streams_open{method="${method}"}`), 0, method);
    assert.equal(
      sample(first, 'ledger_gateway_ledger_streams_open{method="VersionService/GetLedgerApiVersion"}'),
      undefined,
    );
  });

  it("counts the ledger streams a WebSocket stream holds open, and none once it closed", async () => {
    const series = 'ledger_gateway_ledger_streams_open{method="CommandCompletionService/CompletionStream"}';
    const scrape = async () =>
      sample(await (await stack.request("/metrics", { token: null })).text(), series);
    const until = async (value: number) => {
      let seen = await scrape();
      for (let i = 0; i < 100 && seen !== value; i++) {
        await new Promise((r) => setTimeout(r, 20));
        seen = await scrape();
      }
      return seen;
    };
    const allocated = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "metricsAlice" }));
    const party = ((await allocated.json()) as { partyDetails: { party: string } }).partyDetails.party;
    const url = `${stack.url.replace("http", "ws")}/v2/commands/completions`;
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${stack.token}`]);
    const closed = once(socket, "close");
    await once(socket, "open");
    socket.send(JSON.stringify({ userId: "participant_admin", parties: [party], beginExclusive: 0 }));
    assert.equal(await until(1), 1);
    socket.close(1000);
    await closed;
    assert.equal(await until(0), 0);
  });

  it("does not count the scrape itself as a request in flight", () => {
    assert.equal(sample(first, "ledger_gateway_http_requests_in_flight"), 0);
  });

  it("exports no gauge named like a counter", () => {
    const gauges = [...first.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1] as string);
    assert.ok(gauges.includes("nodejs_active_handles"), "the typed gauge the dropped totals sum up stays");
    assert.deepEqual(
      gauges.filter((name) => name.endsWith("_total")),
      [],
    );
    for (const name of DROPPED_DEFAULT_METRICS) assert.ok(!first.includes(name), name);
  });

  it("labels a request with a method of the client's invention as OTHER", async () => {
    const res = await stack.request("/v2/version", { method: "BREW" });
    await res.arrayBuffer();
    assert.equal(res.status, 404);
    const text = await (await stack.request("/metrics", { token: null })).text();
    assert.equal(
      sample(text, 'ledger_gateway_http_requests_total{route="unmatched",method="OTHER",status_class="4xx"}'),
      1,
    );
    assert.ok(!text.includes("BREW"));
  });

  it("labels a WebSocket close code of the client's invention as other", async () => {
    const url = `${stack.url.replace("http", "ws")}/v2/commands/completions`;
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${stack.token}`]);
    await once(socket, "open");
    socket.close(4321, "bye");
    await once(socket, "close");
    let text = "";
    const series = 'ledger_gateway_ws_closes_total{endpoint="/v2/commands/completions",code="other"}';
    // The gateway records the close when its side of the socket is gone, just after ours.
    for (let i = 0; i < 100 && sample(text, series) !== 1; i++) {
      text = await (await stack.request("/metrics", { token: null })).text();
      if (sample(text, series) !== 1) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(sample(text, series), 1);
    assert.ok(!text.includes('code="4321"'));
  });

  it("answers a scraper that asks for OpenMetrics, as Prometheus does, with OpenMetrics 1.0 whose buckets carry the traces of ledger calls", async () => {
    await (await stack.request("/v2/version", { headers: { traceparent: TRACEPARENT } })).arrayBuffer();
    const res = await stack.request("/metrics", { token: null, headers: { accept: PROMETHEUS_ACCEPT } });
    assert.equal(
      res.headers.get("content-type"),
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
    const text = await res.text();
    assert.ok(text.endsWith("\n# EOF\n"));
    // The call the request made to the ledger carried its trace: the newest in its bucket.
    const exemplars = text
      .split("\n")
      .filter(
        (line) =>
          line.startsWith('ledger_gateway_grpc_client_call_duration_seconds_bucket{le="') &&
          line.includes('method="VersionService/GetLedgerApiVersion",code="OK"}'),
      )
      .map((line) => /# \{trace_id="([0-9a-f]{32})"\} [0-9.e-]+ [0-9.]+$/.exec(line)?.[1])
      .filter((traceId) => traceId !== undefined);
    assert.ok(exemplars.includes(TRACE_ID), text.slice(0, 200));
  });

  it("serves overlapping scrapes in the format each asked for", async () => {
    const accepts = [PROMETHEUS_ACCEPT, "*/*", PROMETHEUS_ACCEPT, "text/plain", PROMETHEUS_ACCEPT, "*/*"];
    const answers = await Promise.all(
      accepts.map(async (accept) => {
        const res = await stack.request("/metrics", { token: null, headers: { accept } });
        return { contentType: res.headers.get("content-type"), text: await res.text() };
      }),
    );
    answers.forEach(({ contentType, text }, i) => {
      const openMetrics = accepts[i] === PROMETHEUS_ACCEPT;
      assert.equal(contentType?.startsWith("application/openmetrics-text"), openMetrics, accepts[i]);
      assert.equal(text.endsWith("# EOF\n"), openMetrics);
      // Counters keep their name in the Prometheus text, whatever OpenMetrics scrapes ran beside.
      assert.equal(text.includes("# TYPE ledger_gateway_http_requests_total counter"), !openMetrics);
      assert.equal(text.includes("# TYPE ledger_gateway_http_requests counter"), openMetrics);
    });
  });

  it("passes promtool check metrics on a live scrape", {
    skip: typeof promtool === "string" ? false : promtool.skip,
  }, async () => {
    // Some traffic first, so that histograms and counters hold observations too.
    await (await stack.request("/v2/version")).arrayBuffer();
    await (await stack.request("/v2/no-such-route")).arrayBuffer();
    const text = await (await stack.request("/metrics", { token: null })).text();
    const child = spawn(promtool as string, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.stdin.end(text);
    const [code] = await once(child, "exit");
    assert.equal(code, 0, output);
    assert.equal(output.trim(), "");
  });
});
