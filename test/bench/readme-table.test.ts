import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { machine, resultFileName } from "../../bench/lib/results.js";
import { barChartSvg } from "../../bench/lib/svg-chart.js";
import {
  guideWithTables,
  PERFORMANCE_GUIDE,
  renderWave2,
  tableSources,
  WAVE2_END,
  WAVE2_START,
} from "../../bench/rig/readme-table.js";
import { projectRoot } from "../../src/proto/project-root.js";

const ROOT = projectRoot();

describe("bench results and the performance guide's tables", () => {
  it("the guide's tables are the ones rendered from the newest committed results (else: make bench-readme)", () => {
    const guide = readFileSync(join(ROOT, PERFORMANCE_GUIDE), "utf8");
    assert.equal(guideWithTables(ROOT, guide), guide);
    // Each block names the newest run of its scenarios; a newer run of others (request-cost) is not rendered.
    const sources = tableSources(ROOT);
    assert.ok(guide.includes(sources.gateway), "the guide names its table's result file");
    if (sources.wave2) assert.ok(guide.includes(sources.wave2), "the guide names its wave-2 result file");
  });

  it("names a run's file by its UTC time and commit, so that files sort by time and never collide", () => {
    const commit = { id: "0123456789abcdef0123456789abcdef01234567", dirty: false };
    assert.equal(
      resultFileName(new Date("2026-11-23T09:58:07.123Z"), commit),
      "gateway-2026-11-23T09-58-07Z-0123456.json",
    );
    assert.equal(
      resultFileName(new Date("2026-11-23T09:58:07Z"), { ...commit, dirty: true }),
      "gateway-2026-11-23T09-58-07Z-0123456-dirty.json",
    );
    assert.ok(
      resultFileName(new Date("2026-11-23T09:58:07Z"), commit) <
        resultFileName(new Date("2026-11-23T10:00:00Z"), commit),
    );
  });

  it("describes the machine it ran on", () => {
    const m = machine();
    assert.match(m.cpus, /^\d+ x \S/);
    assert.ok(m.memoryGiB > 0);
    assert.equal(m.node, process.version);
  });

  it("renders the fan-out, idle and workers figures and the targets' verdicts of a bench v2 run", () => {
    const point = (subscribers: number, micros: number, calls: number) => ({
      subscribers,
      elementsPerSubscriber: 200_000 / subscribers,
      deliveries: 200_000,
      errors: 0,
      seconds: 2,
      deliveriesPerSecond: 100_000,
      gatewayCpuSeconds: 0.5,
      gatewayCpuMicrosPerDelivery: micros,
      upstreamStreams: calls,
      handovers: 0,
      admissionProbes: subscribers - 1,
      catchUps: { late_join: 0, detach: 0, rejoin: 0 },
      detaches: 0,
      getUpdatesCalls: calls + subscribers - 1,
      firstOffsets: [1],
      lastOffsets: [200],
    });
    const block = renderWave2(ROOT, {
      path: "bench/results/gateway-2026-11-23T11-00-00Z-0123456.json",
      result: {
        date: "2026-11-23T11:00:00.000Z",
        node: "v20.20.2",
        cpus: "2 x CPU",
        command: "node dist/bench/rig/run.js --scenarios fanout,idle,workers",
        note: "shared machine",
        fanout: {
          upstreamCallsCountedBy: "gateway metrics",
          gatewayWorkers: 1,
          points: [point(1, 2.5, 1), point(100, 1.25, 1)],
        },
        idleConnections: {
          connections: 10_000,
          stillOpen: 10_000,
          rssBeforeBytes: 100 * 2 ** 20,
          rssAfterBytes: 200 * 2 ** 20,
          rssPerConnectionBytes: 10_486,
        },
        workers: {
          scenario: "list twin",
          ratio: 1.2,
          points: [
            {
              workers: 1,
              requests: 100,
              failures: 0,
              seconds: 10,
              requestsPerSecond: 10,
              gatewayCpuSeconds: 9,
            },
            {
              workers: 2,
              requests: 120,
              failures: 0,
              seconds: 10,
              requestsPerSecond: 12,
              gatewayCpuSeconds: 14,
            },
          ],
        },
        targets: {
          cpuPerDeliveryAt100: { maxMicros: 1.5, micros: 1.25, met: true },
          oneUpstreamPerDistinctRequest: { calls: [1, 1], met: true },
          idleConnectionRss: { maxBytes: 16_384, bytes: 10_486, met: true },
          twoWorkersVsOne: { min: 1.7, ratio: 1.2, met: false },
        },
      },
    });
    assert.ok(block.startsWith(WAVE2_START) && block.endsWith(WAVE2_END));
    assert.ok(block.includes("| 100 | 2 000 | 100 000 | 1.25 µs | 1 | 0 | 99 | 100 |"), block);
    assert.ok(block.includes("**10.2 KiB per connection**"), block);
    assert.ok(block.includes("2 workers give **1.20x** one worker"), block);
    assert.ok(
      block.includes(
        "Targets: gateway CPU per delivery at N = 100 <= 1.5 µs: **met**; one upstream stream for any N: **met**; " +
          "idle connection <= 16 KiB: **met**; 2 workers >= 1.7x one: **not met**.",
      ),
      block,
    );
    assert.ok(block.includes("Note: shared machine"));
  });

  it("draws a bar per value, each labelled, and the target as a dashed line", () => {
    const svg = barChartSvg({
      title: "T <1>",
      unit: "µs",
      bars: [
        { label: "N = 1", value: 2.5 },
        { label: "N = 10", value: 1234567 },
      ],
      target: { value: 1.5, label: "target" },
    });
    assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"') && svg.trimEnd().endsWith("</svg>"));
    assert.equal(svg.match(/<rect x=/g)?.length, 2);
    assert.ok(svg.includes(">2.50<") && svg.includes(">1.23M<") && svg.includes(">N = 10<"));
    assert.ok(svg.includes("T &lt;1&gt;"));
    assert.equal(svg.match(/stroke-dasharray/g)?.length, 1);
  });
});
