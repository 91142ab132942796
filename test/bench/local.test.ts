import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { GatewayResult } from "../../bench/lib/results.js";
import { localFigures } from "../../bench/load/local-figures.js";
import { judgeLocal, parseLocalThreshold } from "../../bench/load/local-thresholds.js";
import { UsageError } from "../../bench/load/usage-error.js";
import { renderWave2 } from "../../bench/readme-table.js";
import { projectRoot } from "../../src/proto/project-root.js";

const ROOT = projectRoot();

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** A bench entry as a user runs it, from its source, in a process of its own. */
function bench(script: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench", script), ...args],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) =>
        resolve({ status: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const committed = (name: string) => join(ROOT, "bench", "results", name);
const readResult = (path: string) => JSON.parse(readFileSync(path, "utf8")) as GatewayResult;

describe("load.js local: the comparison against direct gRPC, on processes it starts", () => {
  let dir: string;
  let run: Run;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "local-test-"));
    // The shortest scenario: 50 idle sockets on a gateway in front of a sandbox of 100 ticks; one
    // threshold no gateway meets (under a byte per socket), one every gateway meets.
    run = await bench(
      "load.ts",
      ...["local", "--scenario", "idle", "--idle-connections", "50", "--fanout-ticks", "100", "--out", dir],
      ...["--threshold", "idle.rss-per-connection<1B", "--threshold", "idle.rss-per-connection<100MiB"],
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the results file make bench-readme reads, its chart and its report, and says every figure is the sandbox's", () => {
    const [json] = readdirSync(dir).filter((name) => /^gateway-.*\.json$/.test(name));
    assert.ok(json, run.stderr);
    const result = readResult(join(dir, json));
    assert.equal(result.tool, "ledger-json-gateway load local");
    assert.match(result.caveat ?? "", /embedded sandbox/);
    assert.equal(result.idleConnections?.connections, 50);
    assert.ok((result.idleConnections?.rssPerConnectionBytes ?? 0) > 0);
    assert.equal(result.targets.idleConnectionRss?.maxBytes, 16 * 1024);
    assert.match(
      result.command,
      /^node dist\/bench\/load\.js local --scenario idle --idle-connections 50 .*--threshold 'idle\.rss-per-connection<1B'/,
    );
    assert.ok(result.machine && result.loadAverage);
    const base = json.replace(/\.json$/, "");
    assert.ok(readFileSync(join(dir, `${base}-idle.svg`), "utf8").startsWith("<svg"));
    const html = readFileSync(join(dir, `${base}.html`), "utf8");
    assert.match(html, /Every figure here is against the embedded sandbox/);
    assert.match(html, /<td>idle\.rss-per-connection<\/td><td>\d+<\/td><td>B<\/td>/);
    assert.match(html, /<figure id="idle"><svg/);
    assert.match(html, /idle\.rss-per-connection&lt;1B<\/td><td>\d+<\/td><td class="fail">BREACHED/);
    assert.match(run.stderr, /^load local: every figure below is against the embedded sandbox/m);
    // make bench-readme renders it as it renders the files bench/run.ts wrote.
    const block = renderWave2(ROOT, { path: `bench/results/${json}`, result });
    assert.match(block, /\*\*[\d.]+ KiB per connection\*\*/);
    assert.match(block, /`node dist\/bench\/load\.js local --scenario idle /);
  });

  it("judges its thresholds on the named figures: one breached is exit 1, said on stderr and in the results", () => {
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /^threshold idle\.rss-per-connection<1B: BREACHED \(measured \d+\)$/m);
    assert.match(run.stdout, /^threshold idle\.rss-per-connection<100MiB: passed \(measured \d+\)$/m);
    assert.match(
      run.stderr,
      /^load local: threshold breached: idle\.rss-per-connection<1B \(measured \d+\)$/m,
    );
    const [json] = readdirSync(dir).filter((name) => name.endsWith(".json"));
    const verdicts = readResult(join(dir, json as string)).thresholds ?? [];
    assert.deepEqual(
      verdicts.map((v) => [v.threshold, v.passed]),
      [
        ["idle.rss-per-connection<1B", false],
        ["idle.rss-per-connection<100MiB", true],
      ],
    );
  });

  it("--compare sets its figures beside a committed run of bench/run.ts's", async () => {
    const [json] = readdirSync(dir).filter((name) => name.endsWith(".json"));
    const old = committed("gateway-2026-11-23T13-04-31Z-c759bb4.json");
    const compared = await bench("load.ts", "--compare", old, join(dir, json as string));
    assert.equal(compared.status, 0, compared.stderr);
    assert.match(
      compared.stdout,
      /^A: .*node dist\/bench\/run\.js --scenarios fanout,idle,workers, c759bb4/m,
    );
    assert.match(compared.stdout, /^B: .*node dist\/bench\/load\.js local --scenario idle/m);
    assert.match(compared.stdout, /^both against the embedded sandbox/m);
    assert.match(compared.stdout, /^idle\.rss-per-connection +B +10104 +\d+ +[\d.]+$/m);
    assert.match(compared.stdout, /^fanout\.cpu-per-delivery +µs +1\.199 +- +-$/m);
  });
});

describe("load.js local's command line", () => {
  it("prints its usage with the defaults and every scenario for --help, exit 0", async () => {
    const help = await bench("load.ts", "local", "--help");
    assert.equal(help.status, 0, help.stderr);
    assert.match(
      help.stdout,
      /^usage: node dist\/bench\/load\.js local \[--scenario update-stream,submit-and-wait,fanout,idle,workers\] \[--ticks 100000\]/,
    );
    assert.match(help.stdout, /request-cost, ws-compression, fairness/);
    const top = await bench("load.ts", "--help");
    assert.match(top.stdout, /^ {2}local \.\.\. +the gateway against direct gRPC/m);
  });

  it("refuses an unknown flag, scenario, threshold or caps setting with a usage line and exit 2, starting nothing", async () => {
    const [unknown, scenario, unread, elsewhere, caps] = await Promise.all([
      bench("load.ts", "local", "--bogus", "1"),
      bench("load.ts", "local", "--scenario", "nope"),
      bench("load.ts", "local", "--threshold", "fast please"),
      bench("load.ts", "local", "--scenario", "idle", "--threshold", "fanout.cpu-per-delivery<1.5us"),
      bench("load.ts", "local", "--scenario", "fairness", "--fairness-caps", "maybe"),
    ]);
    for (const result of [unknown, scenario, unread, elsewhere, caps]) {
      assert.equal(result.status, 2, result.stderr);
      assert.equal(result.stdout, "");
      assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    }
    assert.match(unknown.stderr, /Unknown option '--bogus'\nusage: node dist\/bench\/load\.js local /);
    assert.match(scenario.stderr, /^load local: unknown scenario nope; known: update-stream, .*\bfairness\b/);
    assert.match(scenario.stderr, /\nusage: node dist\/bench\/load\.js local /);
    assert.match(unread.stderr, /--threshold 'fast please' is not SCENARIO\.FIGURE<VALUE/);
    assert.match(elsewhere.stderr, /reads fanout, which this run does not have \(it has idle\)/);
    assert.match(caps.stderr, /--fairness-caps takes on, off or both \(on,off\), not maybe/);
  });

  it("bench/run.ts is a deprecated alias of it: the same usage, --scenarios read as --scenario", () => {
    const help = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "bench", "run.ts"), "--help"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(help.status, 0, help.stderr);
    assert.equal(help.stderr, "");
    assert.match(help.stdout, /^usage: node dist\/bench\/load\.js local .*\[--ticks 100000\]/);
    const scenario = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench", "run.ts"), "--scenarios", "nope"],
      { cwd: ROOT, encoding: "utf8" },
    );
    assert.equal(scenario.status, 2);
    assert.match(scenario.stderr, /^run\.js is deprecated: it runs `node dist\/bench\/load\.js local`/);
    assert.match(scenario.stderr, /unknown scenario nope; known: update-stream/);
  });
});

describe("local's named figures and thresholds", () => {
  it("reads the figures of every committed comparison, of every age", () => {
    const files = readdirSync(join(ROOT, "bench", "results")).filter((name) =>
      /^gateway-.*\.json$/.test(name),
    );
    assert.ok(files.length > 0);
    for (const name of files) {
      const figures = localFigures(readResult(committed(name)));
      assert.ok(Object.keys(figures).length > 0, name);
    }
    const v1 = localFigures(readResult(committed("gateway-2026-11-23T10-31-20Z-1c1860c.json")));
    assert.deepEqual(v1["update-stream.ws-vs-direct"], { value: 0.842, unit: "x" });
    assert.deepEqual(v1["submit-and-wait.p99"], { value: 29.58, unit: "ms" });
    const wave2 = localFigures(readResult(committed("gateway-2026-11-23T13-04-31Z-c759bb4.json")));
    assert.deepEqual(wave2["fanout.cpu-per-delivery"], { value: 1.199, unit: "µs" });
    assert.deepEqual(wave2["idle.rss-per-connection"], { value: 10104, unit: "B" });
  });

  it("converts a threshold's unit to its figure's, and breaches one it cannot read", () => {
    const figures = {
      "fanout.cpu-per-delivery": { value: 1.2, unit: "µs" as const },
      "idle.rss-per-connection": { value: 10_000, unit: "B" as const },
      "submit-and-wait.p99": { value: 30, unit: "ms" as const },
      "update-stream.ws-vs-direct": { value: 0.84, unit: "x" as const },
    };
    const verdict = (text: string) => judgeLocal(parseLocalThreshold(text), figures);
    assert.equal(verdict("fanout.cpu-per-delivery<1.5us").passed, true);
    assert.equal(verdict("fanout.cpu-per-delivery<0.001ms").passed, false);
    assert.equal(verdict("idle.rss-per-connection<16KiB").passed, true);
    assert.equal(verdict("idle.rss-per-connection<9000").passed, false);
    assert.equal(verdict("submit-and-wait.p99<=0.03s").passed, true);
    assert.equal(verdict("update-stream.ws-vs-direct>=0.8").passed, true);
    assert.equal(verdict("update-stream.ws-vs-direct>=0.9x").passed, false);
    const missing = verdict("fanout.n100.cpu-per-delivery<1.5us");
    assert.ok(Number.isNaN(missing.actual) && !missing.passed);
    const wrongUnit = verdict("idle.rss-per-connection<16ms");
    assert.ok(Number.isNaN(wrongUnit.actual) && !wrongUnit.passed);
    assert.throws(() => parseLocalThreshold("p99<50ms"), UsageError);
  });
});
