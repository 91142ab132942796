import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { Counter, Gauge, Registry } from "prom-client";
import { PendingCounts } from "../../src/metrics/pending-counts.js";

async function values(metric: Counter<string> | Gauge<string>): Promise<Record<string, number>> {
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [Object.values(v.labels).join(" "), v.value]));
}

describe("PendingCounts", () => {
  it("hands a counter its increments, summed per series, each time it is read", async () => {
    const registry = new Registry();
    const pending = new PendingCounts<"endpoint" | "transport">("endpoint", "transport");
    const counter: Counter<"endpoint" | "transport"> = new Counter({
      name: "sent_total",
      help: "sent",
      labelNames: ["endpoint", "transport"] as const,
      registers: [registry],
      collect: () => pending.flushInto(counter),
    });
    pending.add("/v2/updates", "ws", 3);
    pending.add("/v2/updates", "ws", 2);
    pending.add("/v2/updates", "sse", 1);
    deepStrictEqual(await values(counter), { "/v2/updates ws": 5, "/v2/updates sse": 1 });
    pending.add("/v2/updates", "ws", 4);
    // Read twice: nothing is handed over twice.
    deepStrictEqual(await values(counter), { "/v2/updates ws": 9, "/v2/updates sse": 1 });
    deepStrictEqual(await values(counter), { "/v2/updates ws": 9, "/v2/updates sse": 1 });
    deepStrictEqual((await registry.getMetricsAsJSON())[0]?.values.length, 2);
  });

  it("moves a gauge both ways", async () => {
    const pending = new PendingCounts<"endpoint" | "mode">("endpoint", "mode");
    const gauge: Gauge<"endpoint" | "mode"> = new Gauge({
      name: "members",
      help: "members",
      labelNames: ["endpoint", "mode"] as const,
      registers: [],
      collect: () => pending.flushInto(gauge),
    });
    gauge.set({ endpoint: "/v2/updates", mode: "own" }, 0);
    pending.add("/v2/updates", "shared", 1);
    pending.add("/v2/updates", "shared", 1);
    pending.add("/v2/updates", "shared", -1);
    pending.add("/v2/updates", "own", 1);
    deepStrictEqual(await values(gauge), { "/v2/updates own": 1, "/v2/updates shared": 1 });
    pending.add("/v2/updates", "own", -1);
    deepStrictEqual(await values(gauge), { "/v2/updates own": 0, "/v2/updates shared": 1 });
  });
});
