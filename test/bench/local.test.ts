import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { GatewayResult } from "../../bench/lib/results.js";
import { UsageError } from "../../bench/load/usage-error.js";
import { localFigures } from "../../bench/rig/figures.js";
import { LOCAL_FLAGS, localOptions } from "../../bench/rig/options.js";
import { renderWave2 } from "../../bench/rig/readme-table.js";
import type { LocalResult, WorkersScalingResult } from "../../bench/rig/result.js";
import { judgeLocal, parseLocalThreshold } from "../../bench/rig/thresholds.js";
import { cpuPlan } from "../../bench/rig/workers-scaling.js";
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
    assert.equal(result.tool, "ledger-json-gateway bench local");
    assert.match(result.caveat ?? "", /embedded sandbox/);
    assert.equal(result.idleConnections?.connections, 50);
    assert.ok((result.idleConnections?.rssPerConnectionBytes ?? 0) > 0);
    assert.equal(result.targets.idleConnectionRss?.maxBytes, 16 * 1024);
    assert.match(
      result.command,
      /^ledger-json-gateway bench local --scenario idle --idle-connections 50 .*--threshold 'idle\.rss-per-connection<1B'/,
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
    // make bench-readme renders it as it renders the files bench/rig/run.ts wrote.
    const block = renderWave2(ROOT, { path: `bench/results/${json}`, result });
    assert.match(block, /\*\*[\d.]+ KiB per connection\*\*/);
    assert.match(block, /`ledger-json-gateway bench local --scenario idle /);
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

  it("--compare sets its figures beside a committed run of bench/rig/run.ts's", async () => {
    const [json] = readdirSync(dir).filter((name) => name.endsWith(".json"));
    const old = committed("gateway-2026-11-23T13-04-31Z-c759bb4.json");
    const compared = await bench("load.ts", "--compare", old, join(dir, json as string));
    assert.equal(compared.status, 0, compared.stderr);
    assert.match(
      compared.stdout,
      /^A: .*node dist\/bench\/run\.js --scenarios fanout,idle,workers, c759bb4/m,
    );
    assert.match(compared.stdout, /^B: .*ledger-json-gateway bench local --scenario idle/m);
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
      /^usage: ledger-json-gateway bench local \[--scenario update-stream,submit-and-wait,fanout,idle,workers\] \[--ticks 100000\]/,
    );
    assert.match(help.stdout, /request-cost, ws-compression, fairness, workers-scaling/);
    assert.match(help.stdout, /\[--scaling-workers 1,2,4,8,default\] \[--scaling-scenarios streams,submit\]/);
    assert.match(help.stdout, /^ {2}workers-scaling {9}a fresh gateway per --scaling-workers count/m);
    assert.match(help.stdout, /^ {2}--gateway-cpus LIST {5}workers-scaling: taskset CPU lists/m);
    assert.match(help.stdout, /^ {2}--commit ID {13}the commit measured/m);
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
    assert.match(unknown.stderr, /Unknown option '--bogus'\nusage: ledger-json-gateway bench local /);
    assert.match(scenario.stderr, /^load local: unknown scenario nope; known: update-stream, .*\bfairness\b/);
    assert.match(scenario.stderr, /\nusage: ledger-json-gateway bench local /);
    assert.match(unread.stderr, /--threshold 'fast please' is not SCENARIO\.FIGURE<VALUE/);
    assert.match(elsewhere.stderr, /reads fanout, which this run does not have \(it has idle\)/);
    assert.match(caps.stderr, /--fairness-caps takes on, off or both \(on,off\), not maybe/);
  });

  it("bench/rig/run.ts is a deprecated alias of it: the same usage, --scenarios read as --scenario", () => {
    const help = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench", "rig", "run.ts"), "--help"],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    assert.equal(help.status, 0, help.stderr);
    assert.equal(help.stderr, "");
    assert.match(help.stdout, /^usage: ledger-json-gateway bench local .*\[--ticks 100000\]/);
    const scenario = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench", "rig", "run.ts"), "--scenarios", "nope"],
      { cwd: ROOT, encoding: "utf8" },
    );
    assert.equal(scenario.status, 2);
    assert.match(scenario.stderr, /^run\.js is deprecated: it runs `ledger-json-gateway bench local`/);
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

describe("load.js local --scenario workers-scaling: worker counts against one load", () => {
  it("runs only when named, and reads its flags", () => {
    const defaults = Object.fromEntries(
      Object.entries(LOCAL_FLAGS).map(([name, flag]) => [name, "default" in flag ? flag.default : undefined]),
    ) as Parameters<typeof localOptions>[0];
    const plain = localOptions(defaults);
    assert.equal(plain.scenarios.has("workers-scaling"), false);
    assert.deepEqual(plain.workersScaling.workers, [1, 2, 4, 8, "default"]);
    assert.deepEqual(plain.workersScaling.loads, ["streams", "submit"]);
    assert.deepEqual(plain.workersScaling.cpus, {});
    assert.equal(plain.commit, undefined);
    const options = localOptions({
      ...defaults,
      scenario: "workers-scaling",
      "scaling-workers": "1,2,default",
      "scaling-scenarios": "submit",
      "scaling-seconds": "8",
      "scaling-warm-up-seconds": "4",
      "scaling-clients": "2",
      "scaling-stream-concurrency": "32",
      "scaling-submit-concurrency": "16",
      "scaling-ticks": "5000",
      "scaling-batch": "5",
      "gateway-cpus": "0-7",
      "sandbox-cpus": "8,9",
      "client-cpus": "10-15",
      commit: "d62f3b9",
      threshold: ["workers-scaling.streams.w2-vs-1>=1.7"],
    });
    assert.deepEqual(options.workersScaling, {
      workers: [1, 2, "default"],
      loads: ["submit"],
      seconds: 8,
      warmUpSeconds: 4,
      clients: 2,
      streamConcurrency: 32,
      submitConcurrency: 16,
      ticks: 5000,
      batch: 5,
      cpus: { gateway: "0-7", sandbox: "8,9", clients: "10-15" },
    });
    assert.equal(options.commit, "d62f3b9");
    for (const [flag, value, message] of [
      ["scaling-workers", "1,none", /--scaling-workers takes a whole number of at least 1; got 'none'/],
      ["scaling-scenarios", "streams,nope", /--scaling-scenarios takes streams, submit or both/],
      ["gateway-cpus", "first eight", /--gateway-cpus takes a taskset CPU list/],
      ["commit", "a b", /--commit takes a commit id/],
    ] as const)
      assert.throws(
        () => localOptions({ ...defaults, [flag]: value }),
        (error: Error) => error instanceof UsageError && message.test(error.message),
      );
  });

  it("pins the processes apart on 12 cores or more with taskset, as given where given, else nothing", () => {
    assert.deepEqual(cpuPlan({}, 16, true), {
      gateway: "0-7",
      sandbox: "8-9",
      clients: "10-15",
      why: "16 cores: gateway, sandbox and clients on cores of their own",
    });
    assert.deepEqual(cpuPlan({}, 12, true), {
      gateway: "0-5",
      sandbox: "6-7",
      clients: "8-11",
      why: "12 cores: gateway, sandbox and clients on cores of their own",
    });
    assert.deepEqual(cpuPlan({}, 2, true), { why: "unpinned: 2 cores; every process shares them" });
    assert.deepEqual(cpuPlan({}, 16, false), {
      why: "unpinned: 16 cores, no taskset; every process shares them",
    });
    assert.deepEqual(cpuPlan({ gateway: "0-1" }, 2, true), { gateway: "0-1", why: "as given" });
  });

  it("names the figures of bench/workers-scaling.ts's committed run as it names its own", () => {
    // What the standalone tool wrote, less what a comparison's file holds once, is this scenario's shape.
    const old = JSON.parse(
      readFileSync(committed("workers-scaling-2026-11-27T03-50-29Z-d62f3b9.json"), "utf8"),
    ) as WorkersScalingResult;
    const figures = localFigures({ targets: {}, workersScaling: old } as unknown as LocalResult);
    assert.deepEqual(figures["workers-scaling.streams.w2-vs-1"], { value: 2.24, unit: "x" });
    assert.deepEqual(figures["workers-scaling.streams.w4-vs-1"], { value: 3.33, unit: "x" });
    assert.deepEqual(figures["workers-scaling.streams.rate-w1"], { value: 15640, unit: "/s" });
    assert.deepEqual(figures["workers-scaling.submit.cpu-per-command-w1"], { value: 196.5, unit: "µs" });
    assert.ok(figures["workers-scaling.submit.rate-wdefault"]);
    const repeated = localFigures({
      targets: {},
      workersScaling: {
        results: {
          streams: {
            unit: "transactions of 10 events",
            concurrency: 16,
            points: [1, 2, 1].map((workers, i) => ({
              workers,
              threads: workers,
              seconds: 6,
              perSecond: 1000 + i,
              failures: 0,
              cores: { gateway: 1, sandbox: 0.2, clients: 0.1 },
              gatewayCpuMicrosPer: 70,
              ...(i > 0 && { ratio: 1 }),
            })),
          },
        },
      },
    } as unknown as LocalResult);
    assert.equal(repeated["workers-scaling.streams.rate-w1"]?.value, 1000);
    assert.equal(repeated["workers-scaling.streams.rate-w1-run2"]?.value, 1002);
  });

  it("a tiny run writes its points into the results file and its figures into the report, under --commit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "local-scaling-test-"));
    try {
      const run = await bench(
        "load.ts",
        ...["local", "--scenario", "workers-scaling", "--scaling-workers", "1", "--scaling-seconds", "1"],
        ...["--scaling-warm-up-seconds", "1", "--scaling-ticks", "200", "--scaling-clients", "1"],
        ...["--scaling-stream-concurrency", "2", "--scaling-submit-concurrency", "2"],
        ...["--commit", "abc1234", "--out", dir, "--threshold", "workers-scaling.streams.rate-w1>0"],
      );
      assert.equal(run.status, 0, run.stderr);
      const json = `${readdirSync(dir).find((name) => /^gateway-.*-abc1234\.json$/.test(name))}`;
      const result = JSON.parse(readFileSync(join(dir, json), "utf8")) as LocalResult;
      assert.deepEqual(result.commit, { id: "abc1234", dirty: false });
      const scaling = result.workersScaling as WorkersScalingResult;
      assert.match(scaling.cpus.why, /^unpinned: \d+ cores|cores of their own$/);
      assert.deepEqual(
        [scaling.seconds, scaling.warmUpSeconds, scaling.clients, scaling.ticks],
        [1, 1, 1, 200],
      );
      for (const [load, unit] of [
        ["streams", "transactions of 10 events"],
        ["submit", "commands"],
      ] as const) {
        const measured = scaling.results[load];
        assert.equal(measured?.unit, unit);
        assert.equal(measured?.concurrency, 2);
        const [point] = measured?.points ?? [];
        assert.deepEqual(Object.keys(point ?? {}), [
          "workers",
          "threads",
          "seconds",
          "perSecond",
          "failures",
          "cores",
          "gatewayCpuMicrosPer",
        ]);
        assert.equal(point?.workers, 1);
        assert.equal(point?.threads, 1);
        assert.ok((point?.perSecond ?? 0) > 0, JSON.stringify(point));
        assert.deepEqual(Object.keys(point?.cores ?? {}), ["gateway", "sandbox", "clients"]);
      }
      assert.deepEqual(
        result.thresholds?.map((v) => v.passed),
        [true],
      );
      const html = readFileSync(join(dir, json.replace(/\.json$/, ".html")), "utf8");
      assert.match(html, /<td>workers-scaling\.submit\.cpu-per-command-w1<\/td><td>[\d.]+<\/td><td>µs<\/td>/);
      assert.match(run.stdout, /^workers-scaling, streams: transactions of 10 events per second, 2 loops$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("load.js local --scenario storm: a reconnect storm against established subscribers", () => {
  let dir: string;
  let run: Run;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "storm-test-"));
    run = await bench(
      "load.ts",
      ...["local", "--scenario", "storm", "--storm-subscribers", "60", "--storm-crowds", "1x1,3x2"],
      // Unpaced, so that each crowd arrives at once however busy the machine (the pace, which
      // follows the worker's lag, would spread a small crowd over turns on a loaded one).
      // Ticks every 10 ms: a warm storm of 60 is over in some tens of ms, and its window must hold
      // established samples.
      ...["--storm-established", "5", "--storm-tick-ms", "10", "--storm-upgrades-per-second", "0"],
      ...["--out", dir],
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("opens every socket of each crowd, shares the ledger's calls and measures the established subscribers before and during", () => {
    assert.equal(run.status, 0, run.stderr);
    const file = readdirSync(dir).find((name) => name.endsWith(".json"));
    assert.ok(file, `no results file in ${readdirSync(dir).join(", ")}`);
    const storm = (JSON.parse(readFileSync(join(dir, file), "utf8")) as LocalResult).storm;
    assert.ok(storm);
    assert.equal(storm.crowdNice, 10);
    assert.match(storm.scenario, /the crowd's at nice 10/);
    assert.deepEqual(
      storm.points.map((point) => [
        point.round,
        point.subscribers,
        point.tokens,
        point.queries,
        point.opened,
        point.failed,
      ]),
      [
        ["cold", 60, 1, 1, 60, 0],
        ["warm", 60, 1, 1, 60, 0],
        ["cold", 60, 3, 2, 60, 0],
        ["warm", 60, 3, 2, 60, 0],
      ],
    );
    for (const point of storm.points) {
      assert.equal(point.upgradesPerSecond, 0);
      // 60 sockets of at most 3 tokens and 2 queries at once: the crowd shares the ledger's answers
      // (unshared, each start asks twice: its upgrade's admission and its join's probe). Under
      // load a crowd arrives spread and shares less: 0.57 was seen on CI, for 6 distinct pairs.
      assert.ok(point.ledgerCallsPerStart < 1, `${point.ledgerCallsPerStart} ledger calls per start`);
      // Net of the established load's rate, which a short storm on a busy machine can exceed.
      assert.ok(point.grossCpuMicrosPerStart > 0, JSON.stringify(point));
      assert.ok(point.grossCpuMicrosPerStart >= point.gatewayCpuMicrosPerStart, JSON.stringify(point));
      assert.ok(
        point.established.before.count > 0 && point.established.during.count > 0,
        JSON.stringify(point),
      );
      assert.ok(point.established.during.p99 >= point.established.during.p50);
      // The gateway's own stalls over the storm, read from its /metrics.
      assert.ok((point.gatewayLoopLagMaxMs ?? 0) > 0, JSON.stringify(point));
      // The same crowd against bare uWS right after: every socket had its first frame there too.
      assert.ok(point.bare !== undefined && point.bare.failed === 0, JSON.stringify(point));
      assert.ok(point.bare.firstAllSeconds > 0, JSON.stringify(point));
    }
  });
});
