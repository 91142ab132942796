import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { exposedFamilies, HISTOGRAM_SUFFIX } from "../support/exposed-metrics.js";

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string; exemplar?: boolean }[];
}

const dashboard = JSON.parse(readFileSync("grafana/dashboards/ledger-json-gateway.json", "utf8")) as {
  panels: Panel[];
};

describe("Grafana dashboard", () => {
  it("queries only metrics the gateway exposes", async () => {
    const families = await exposedFamilies();
    const used = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .flatMap((t) => [...t.expr.matchAll(/\b((?:ledger_gateway|process|nodejs)_[a-z0-9_]+)/g)]);
    assert.ok(used.length >= 15, "the dashboard has queries");
    for (const [name] of used) {
      const family = families.has(name) ? name : name.replace(HISTOGRAM_SUFFIX, "");
      assert.ok(families.has(family), `${name} is not exposed by the gateway`);
    }
  });

  it("shows the exemplars of the latency histograms that carry them (the trace of a request or call)", () => {
    const quantiles = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .filter((t) =>
        /histogram_quantile\(0\.99, .*_(http_request|grpc_client_call)_duration_seconds_bucket/.test(t.expr),
      );
    assert.equal(quantiles.length, 2, "HTTP p99 by route, upstream call p99 by method");
    for (const target of quantiles) assert.equal(target.exemplar, true, target.expr);
  });

  it("shows every metric of the gateway's own", async () => {
    const exprs = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .map((t) => t.expr)
      .join("\n");
    const own = [...(await exposedFamilies())].filter((name) => name.startsWith("ledger_gateway_"));
    assert.ok(own.length >= 10);
    for (const name of own) assert.ok(exprs.includes(name), `${name} has no panel`);
  });
});
