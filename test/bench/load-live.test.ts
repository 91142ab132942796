import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort } from "../../bench/lib/free-port.js";
import type { LoadResult } from "../../bench/load/load-result.js";
import { decodeHistogram, histogram, percentileMs } from "../../bench/load/recorder.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { debianBinary } from "../deploy/debian-package.js";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { runBench } from "./bench-process.js";

/**
 * `ledger-json-gateway bench` as an operator runs it against a gateway it did not start: its live
 * metrics scraped by a real Prometheus (Debian's) and the tool's Grafana dashboard evaluated
 * there, SIGTERM to the CLI wrapper, an overloaded run, --abort-on-fail, runs of two processes
 * merged, the closed model's timeline.
 */
const ROOT = projectRoot();
type Series = LoadResult["scenarios"][string];

const bench = (...args: string[]) => runBench(args, 120_000);

const resultOf = (dir: string): LoadResult => {
  const files = readdirSync(dir).filter((name) => name.endsWith(".json"));
  assert.equal(files.length, 1, `one results file in ${dir}: ${files}`);
  return JSON.parse(readFileSync(join(dir, files[0] as string), "utf8")) as LoadResult;
};

/** Whether a process of this id exists (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const prometheus = await debianBinary("prometheus", "prometheus");

describe("ledger-json-gateway bench: live, signals, overload, merge", () => {
  let stack: Stack;
  let dir: string;
  let tokenFile: string;
  const common = () => ["--url", stack.url, "--token-file", tokenFile, "--warm-up", "0", "--interval", "1s"];

  before(async () => {
    stack = await startStack();
    dir = mkdtempSync(join(tmpdir(), "bench-live-"));
    tokenFile = join(dir, "token");
    writeFileSync(tokenFile, `${stack.token}\n`);
  });
  after(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves its live metrics to a real Prometheus, and every panel of its dashboard has data there", {
    skip: typeof prometheus === "string" ? false : prometheus.skip,
  }, async () => {
    const promDir = join(dir, "prometheus");
    const metricsPort = await freePort();
    const promPort = await freePort();
    const gateway = new URL(stack.url);
    writeFileSync(
      join(dir, "prometheus.yml"),
      `global:
  scrape_interval: 1s
scrape_configs:
  - job_name: ledger-json-gateway-bench
    static_configs:
      - targets: ["127.0.0.1:${metricsPort}"]
  - job_name: ledger-json-gateway
    metrics_path: ${gateway.pathname.replace(/\/$/, "")}/metrics
    static_configs:
      - targets: ["${gateway.host}"]
`,
    );
    const prom: ChildProcess = spawn(
      prometheus as string,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${promDir}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    prom.stderr?.resume();
    const promUrl = `http://127.0.0.1:${promPort}`;
    const query = async (expr: string, at: number) => {
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}&time=${at}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      assert.equal(body.status, "success", `${expr}: ${body.error}`);
      return body.data.result;
    };
    try {
      await until(async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.status === 200, {
        observed: () => `Prometheus exited with ${prom.exitCode}`,
      });
      const dashboard = JSON.parse(
        readFileSync(join(ROOT, "grafana", "dashboards", "ledger-json-gateway-bench.json"), "utf8"),
      ) as { panels: { title: string; targets?: { expr: string }[] }[] };
      const panels = dashboard.panels.flatMap((p) =>
        (p.targets ?? []).map((t) => ({
          title: p.title,
          // What Grafana would send: the variables' values, a rate window that covers the run.
          promql: t.expr
            .replaceAll("$__rate_interval", "30s")
            .replaceAll("$bench_job", "ledger-json-gateway-bench")
            .replaceAll("$job", "ledger-json-gateway"),
        })),
      );
      assert.ok(panels.length >= 8);
      const out = join(dir, "live");
      const tool = spawn(
        process.execPath,
        [
          ...["--import", "tsx", join(ROOT, "bench", "load.ts"), ...common()],
          ...["--scenario", "submit-and-wait,reads,updates", "--subscribers", "2", "--rate", "30/s"],
          ...["--duration", "120s", "--metrics-port", String(metricsPort), "--out", out],
        ],
        { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      tool.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const exited = new Promise<number | null>((resolve) => tool.on("exit", resolve));
      // While the run lasts, every panel gets data from what Prometheus scraped of the tool (and
      // of the gateway); then the run is stopped.
      const empty = async (at: number) => {
        const missing: string[] = [];
        for (const { title, promql } of panels) {
          const rows = await query(promql, at);
          if (!rows.some((r) => Number.isFinite(Number(r.value[1])))) missing.push(`${title}: ${promql}`);
        }
        return missing;
      };
      let seen: string[] = [];
      let during = 0;
      try {
        await until(
          async () => {
            during = Date.now() / 1000;
            seen = await empty(during);
            return seen.length === 0;
          },
          { budgetMs: 100_000, observed: () => `panels without data: ${seen.join("; ")}\n${stderr}` },
        );
      } finally {
        tool.kill("SIGINT");
      }
      assert.equal(await exited, 130, stderr);
      assert.match(stderr, new RegExp(`live metrics on http://0\\.0\\.0\\.0:${metricsPort}/metrics`));
      const answers = await query(
        'ledger_gateway_bench_answers_total{job="ledger-json-gateway-bench"}',
        during,
      );
      const bySeries = new Map(answers.map((r) => [r.metric.series, Number(r.value[1])]));
      for (const name of ["submit-and-wait", "reads", "updates"])
        assert.ok((bySeries.get(name) ?? 0) > 0, `${name}: ${JSON.stringify(answers)}`);
      // The tool's figures in Prometheus are the run's: the run's counts go on after that scrape.
      const result = resultOf(out);
      assert.ok((bySeries.get("reads") ?? 0) <= (result.scenarios.reads?.requests ?? 0));
      const offered = await query('ledger_gateway_bench_offered_total{scenario="reads"}', during);
      assert.ok(
        Number(offered[0]?.value[1]) <= (result.scenarios.reads?.offered ?? 0),
        JSON.stringify(offered),
      );
    } finally {
      prom.kill("SIGTERM");
      if (prom.exitCode === null) await once(prom, "exit");
    }
  });

  it("SIGTERM to ledger-json-gateway bench stops its child, which writes the partial results and gives back its rights", async () => {
    const out = join(dir, "terminated");
    const cli = spawn(
      process.execPath,
      [
        ...["--import", "tsx", join(ROOT, "src", "cli.ts"), "bench", ...common()],
        ...[
          "--scenario",
          "submit-and-wait,updates",
          "--subscribers",
          "2",
          "--rate",
          "20/s",
          "--duration",
          "60s",
        ],
        ...["--out", out],
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    let stdout = "";
    cli.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    cli.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => cli.on("exit", resolve));
    await until(() => /^\[\s*2\.0\/60 s\]/m.test(stderr), { budgetMs: 60_000, observed: () => stderr });
    // The load tool is the wrapper's child (Linux: /proc lists a task's children).
    const pid = cli.pid as number;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    assert.equal(children.length, 1, `one child: ${children}`);
    const child = children[0] as number;
    cli.kill("SIGTERM");
    assert.equal(await exited, 143, stderr);
    assert.equal(alive(child), false, `the load tool (pid ${child}) is gone`);
    assert.match(stderr, /SIGTERM: finishing/);
    assert.match(stderr, /stopped by SIGTERM before the end of its window: partial results written/);
    const result = resultOf(out);
    assert.equal(result.load.interrupted, true);
    assert.ok(
      result.load.durationSeconds >= 2 && result.load.durationSeconds < 60,
      String(result.load.durationSeconds),
    );
    const sent = result.scenarios["submit-and-wait"];
    assert.ok(sent && sent.requests >= 30, JSON.stringify(sent));
    assert.equal(sent.errors, 0, JSON.stringify(sent.errorsByCode));
    assert.match(stdout, /^submit-and-wait: \d+ at [\d.]+\/s/m);
    // The raw samples hold the intervals it ran.
    const ndjson = readdirSync(out).find((name) => name.endsWith(".ndjson")) as string;
    const samples = readFileSync(join(out, ndjson), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { series: string; count: number; histogram: string });
    const rawCount = samples.filter((s) => s.series === "submit-and-wait").reduce((n, s) => n + s.count, 0);
    assert.equal(rawCount, sent.requests, "the raw samples add up to the results");
    const rights = (await (await stack.request("/v2/users/participant_admin/rights")).json()) as {
      rights: { kind: Record<string, { value?: { party?: string } }> }[];
    };
    assert.deepEqual(
      rights.rights.filter((r) => r.kind.CanActAs?.value?.party?.startsWith(result.load.prefix)),
      [],
    );
  });

  it("flags an overloaded run in its summary, and --abort-on-fail stops it at the first breach", async () => {
    const out = join(dir, "overloaded");
    // One request in flight at most, 1000 arrivals a second: most cannot be sent.
    const run = await bench(
      ...common(),
      ...["--scenario", "reads", "--rate", "1000/s", "--max-in-flight", "1", "--duration", "60s"],
      ...["--out", out, "--threshold", "dropped<5", "--threshold", "p95<10s", "--abort-on-fail"],
    );
    assert.equal(run.status, 1, run.stderr);
    assert.match(
      run.stdout,
      /^OVERLOADED: the run could not keep its offered rate: \d+ of \d+ arrivals dropped/m,
    );
    assert.match(
      run.stdout,
      /^reads: \d+ at [\d.]+\/s \(achieved [\d.]+\/s of [\d.]+\/s offered, \d+ dropped\)/m,
    );
    assert.match(run.stderr, /threshold dropped<5 breached by the run so far .*stopping \(--abort-on-fail\)/);
    assert.match(run.stderr, /^\[\s*1\.0\/60 s\] [\d.]+ req\/s \(offered [\d.]+\/s, \d+ dropped\)/m);
    const result = resultOf(out);
    assert.equal(result.load.abortedBy?.threshold, "dropped<5");
    assert.equal(result.load.abortedBy?.atSeconds, 1);
    assert.ok(result.load.durationSeconds < 5, String(result.load.durationSeconds));
    const reads = result.scenarios.reads;
    assert.ok(reads?.dropped !== undefined && reads.dropped >= 5 && reads.offered !== undefined);
    assert.equal(
      reads.offered,
      reads.dropped + reads.requests + reads.errors,
      "each arrival dropped or answered",
    );
    assert.match(result.overloaded ?? "", /arrivals dropped/);
    assert.deepEqual(
      result.thresholds.map((v) => [v.threshold, v.passed]),
      [
        ["dropped<5", false],
        ["p95<10s", true],
      ],
    );
    const page = readFileSync(join(out, readdirSync(out).find((n) => n.endsWith(".html")) as string), "utf8");
    assert.match(page, /<strong>Overloaded:<\/strong>/);
    assert.match(page, /Stopped at 1 s by --abort-on-fail: dropped&lt;5/);
  });

  it("merges the runs of two processes into one result: counts added, percentiles from the added histograms", async () => {
    const [a, b] = await Promise.all(
      ["a", "b"].map(async (name) => {
        const out = join(dir, `merge-${name}`);
        const run = await bench(
          ...common(),
          ...["--scenario", "reads,submit-and-wait", "--rate", "20/s", "--duration", "3s", "--out", out],
        );
        assert.equal(run.status, 0, run.stderr);
        const file = join(out, readdirSync(out).find((n) => n.endsWith(".json")) as string);
        return { file, result: JSON.parse(readFileSync(file, "utf8")) as LoadResult };
      }),
    );
    assert.ok(a && b);
    // The open model's last interval ends with the window, once.
    for (const run of [a, b])
      assert.deepEqual(
        run.result.timeline.map((point) => point.seconds),
        [1, 2, 3],
      );
    const out = join(dir, "merged");
    const merged = await bench("merge", a.file, b.file, "--out", out, "--threshold", "p99<1us");
    assert.equal(merged.status, 1, "the threshold is judged on the merged result");
    assert.match(merged.stdout, /^threshold p99<1us: BREACHED/m);
    const result = resultOf(out);
    assert.deepEqual(
      result.load.merged?.map((m) => m.file),
      [a.file, b.file],
    );
    for (const name of ["reads", "submit-and-wait"]) {
      const sa: Series | undefined = a.result.scenarios[name];
      const sb: Series | undefined = b.result.scenarios[name];
      const sm: Series | undefined = result.scenarios[name];
      assert.ok(sa && sb && sm, name);
      assert.equal(sm.requests, sa.requests + sb.requests);
      assert.equal(sm.errors, sa.errors + sb.errors);
      assert.equal(sm.offered, (sa.offered ?? 0) + (sb.offered ?? 0));
      const both = histogram();
      both.add(decodeHistogram(sa.histogram));
      both.add(decodeHistogram(sb.histogram));
      for (const p of [50, 95, 99, 99.9])
        assert.equal(sm.latencyMs[`p${p}`], percentileMs(both, p), `${name} p${p}`);
      const timelineCount = result.timeline.reduce((n, point) => n + (point.scenarios[name]?.count ?? 0), 0);
      assert.equal(timelineCount, sm.requests, `${name}: the merged timeline adds up`);
    }
    assert.equal(result.overall.requests, a.result.overall.requests + b.result.overall.requests);
    assert.ok(readdirSync(out).some((n) => n.endsWith("-merged.html")));
  });

  it("ends the closed model's timeline with one point at the end of its window", async () => {
    const out = join(dir, "closed");
    const run = await bench(
      ...common(),
      "--scenario",
      "reads",
      "--concurrency",
      "2",
      "--duration",
      "3s",
      "--out",
      out,
    );
    assert.equal(run.status, 0, run.stderr);
    const { timeline } = resultOf(out);
    assert.deepEqual(
      timeline.map((point) => point.seconds),
      [1, 2, 3],
    );
    for (const point of timeline) assert.ok((point.scenarios.reads?.count ?? 0) > 0, JSON.stringify(point));
  });
});
