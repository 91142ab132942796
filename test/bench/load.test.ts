import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { LoadResult } from "../../bench/load/load-result.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { debianBinary } from "../deploy/debian-package.js";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { type BenchRun, runBench } from "./bench-process.js";

const ROOT = projectRoot();

const load = (...args: string[]) => runBench(args);

const resultFiles = (dir: string, ext: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith(ext))
    .map((name) => join(dir, name));

describe("the load tool against a gateway it did not start", () => {
  let stack: Stack;
  let dir: string;
  let tokenFile: string;
  let mixed: BenchRun;
  let mixedOut: string;

  before(async () => {
    stack = await startStack();
    dir = mkdtempSync(join(tmpdir(), "load-test-"));
    tokenFile = join(dir, "token");
    writeFileSync(tokenFile, `${stack.token}\n`);
    mixedOut = join(dir, "mixed");
    // Two request scenarios at a fixed rate, 3 update subscribers; one threshold no run can meet
    // (a p50 under a microsecond) and one it meets.
    mixed = await load(
      ...["--url", stack.url, "--token-file", tokenFile, "--scenario", "submit-and-wait,reads,updates"],
      ...["--rate", "40/s", "--subscribers", "3", "--duration", "3s", "--warm-up", "1s", "--interval", "1s"],
      ...["--out", mixedOut, "--threshold", "p50<1us", "--threshold", "errors<1%"],
    );
  });
  after(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints a progress line per interval with the rate, the percentiles, the errors and the lag", () => {
    const lines = mixed.stderr.split("\n").filter((line) => /^\[\s*\d+\.\d\/3 s\]/.test(line));
    assert.ok(lines.length >= 3, mixed.stderr);
    for (const line of lines) {
      assert.match(
        line,
        /req\/s \(offered [\d.]+\/s, 0 dropped\) p50 [\d.]+m?s p95 [\d.]+m?s p99 [\d.]+m?s p99\.9 [\d.]+m?s errors 0/,
      );
      assert.match(line, /lag p50 [\d.]+m?s p99 [\d.]+m?s \(\d+ deliveries, 0 errors\)/);
      assert.match(line, /tool loop p99 [\d.]+m?s/);
      assert.ok(line.length < 400, line);
    }
    // The sandbox caveat once, above the lines, not on each.
    assert.equal(mixed.stderr.match(/embedded sandbox/g)?.length, 1, mixed.stderr);
    assert.match(mixed.stderr, /every figure below is against the embedded sandbox \(answers in ~0\.1 ms\)/);
  });

  it("writes the JSON results with counts, percentiles and lag, no errors, and no token", () => {
    const [json] = resultFiles(mixedOut, ".json");
    const text = readFileSync(json as string, "utf8");
    assert.ok(!text.includes(stack.token), "the token is not in the results");
    const result = JSON.parse(text) as LoadResult;
    assert.equal(result.target.embeddedSandbox, true);
    assert.equal(result.target.ledgerJsonGateway, true);
    assert.match(result.target.caveat ?? "", /embedded sandbox .*not a participant's figure/);
    assert.deepEqual(result.load.scenarios, ["submit-and-wait", "reads", "updates"]);
    for (const name of ["submit-and-wait", "reads"]) {
      const s = result.scenarios[name];
      assert.ok(s, name);
      // 40/s for 3 s, shared by the two: some 60 each.
      assert.ok(s.requests >= 50 && s.requests <= 70, `${name}: ${s.requests}`);
      assert.equal(s.errors, 0, JSON.stringify(s.errorsByCode));
      assert.ok(
        s.latencyMs.p50 > 0 && s.latencyMs.p99 >= s.latencyMs.p50 && s.latencyMs.max >= s.latencyMs.p99,
      );
      assert.ok(s.histogram.length > 0);
    }
    const updates = result.scenarios.updates;
    assert.ok(updates);
    // Every measured command reached every subscriber.
    assert.equal(updates.requests, 3 * (result.scenarios["submit-and-wait"]?.requests ?? 0));
    assert.equal(updates.errors, 0);
    assert.ok(updates.latencyMs.p50 > 0);
    assert.equal(
      result.overall.requests,
      (result.scenarios["submit-and-wait"]?.requests ?? 0) + (result.scenarios.reads?.requests ?? 0),
    );
    assert.ok(result.timeline.length >= 3);
    assert.ok(result.timeline.some((point) => (point.scenarios.reads?.count ?? 0) > 0));
    assert.doesNotMatch(result.command, /eyJ/);
  });

  it("takes back the rights it granted, and leaves its parties named by its prefix", async () => {
    const [json] = resultFiles(mixedOut, ".json");
    const { prefix } = (JSON.parse(readFileSync(json as string, "utf8")) as LoadResult).load;
    assert.match(prefix, /^load-\d{8}T\d{6}-[0-9a-f]{6}$/);
    const rights = (await (await stack.request("/v2/users/participant_admin/rights")).json()) as {
      rights: { kind: Record<string, { value?: { party?: string } }> }[];
    };
    const granted = rights.rights.filter((r) => r.kind.CanActAs?.value?.party?.startsWith("load-"));
    assert.deepEqual(granted, []);
    const parties = (await (await stack.request("/v2/parties")).json()) as {
      partyDetails: { party: string }[];
    };
    assert.ok(parties.partyDetails.some((p) => p.party.startsWith(`${prefix}-party::`)));
  });

  it("finishes on Ctrl-C: no more requests, rights taken back, results written, exit 130", async () => {
    const out = join(dir, "interrupted");
    const child = spawn(
      process.execPath,
      [
        ...["--import", "tsx", join(ROOT, "bench", "load.ts"), "--url", stack.url, "--token-file", tokenFile],
        ...[
          "--scenario",
          "submit-and-wait,updates",
          "--rate",
          "20/s",
          "--subscribers",
          "2",
          "--duration",
          "60s",
        ],
        ...["--warm-up", "0", "--interval", "1s", "--out", out],
      ],
      { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    await until(() => /^\[\s*1\.0\/60 s\]/m.test(stderr), { budgetMs: 60_000, observed: () => stderr });
    child.kill("SIGINT");
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /SIGINT: finishing/);
    const [json] = resultFiles(out, ".json");
    const result = JSON.parse(readFileSync(json as string, "utf8")) as LoadResult;
    assert.equal(result.load.interrupted, true);
    assert.ok((result.scenarios["submit-and-wait"]?.requests ?? 0) > 0);
    assert.equal(result.scenarios["submit-and-wait"]?.errors, 0);
    const rights = (await (await stack.request("/v2/users/participant_admin/rights")).json()) as {
      rights: { kind: Record<string, { value?: { party?: string } }> }[];
    };
    assert.deepEqual(
      rights.rights.filter((r) => r.kind.CanActAs?.value?.party?.startsWith(result.load.prefix)),
      [],
    );
  });

  it("fails the run with exit 1 when a threshold is breached, naming it", () => {
    assert.equal(mixed.status, 1, mixed.stderr);
    assert.match(mixed.stderr, /threshold breached: p50<1us \(measured [\d.]+\)/);
    assert.doesNotMatch(mixed.stderr, /errors<1%/);
    assert.match(mixed.stdout, /threshold errors<1%: passed/);
  });

  it("writes an HTML report whose charts headless Chromium draws", async () => {
    const chromium = await debianBinary("chromium", "chromium");
    assert.equal(typeof chromium, "string", `chromium: ${JSON.stringify(chromium)}`);
    const [html] = resultFiles(mixedOut, ".html");
    const page = readFileSync(html as string, "utf8");
    assert.doesNotMatch(page, /\s(src|href)=|@import|url\(/, "nothing fetched");
    assert.match(page, /against the embedded sandbox/);
    const dom = await new Promise<string>((resolve, reject) =>
      execFile(
        chromium as string,
        ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", `file://${html}`],
        { timeout: 60_000, maxBuffer: 16 << 20 },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    // The page's script counts the charts whose lines the browser laid out with a length:
    // latency per request scenario (2), throughput, errors, lag, the tool's own loop delay.
    const body = /<body data-charts-drawn="(\d+)" data-charts="(\d+)"/.exec(dom);
    assert.ok(body, dom.slice(0, 500));
    assert.equal(body[2], "6");
    assert.equal(body[1], "6", "every chart drawn");
    assert.ok((dom.match(/<polyline class="series"/g) ?? []).length >= 12);
  });

  it("runs the closed model over the other scenarios, and --compare prints two runs side by side", async () => {
    const out = join(dir, "closed");
    const closed = await load(
      ...["--url", stack.url, "--token-file", tokenFile, "--concurrency", "2", "--acs-contracts", "5"],
      ...[
        "--scenario",
        "reads,acs,submit-async,submit-and-wait-for-transaction,submit-and-wait-for-reassignment",
      ],
      ...["--reassignment-contracts", "2"],
      ...["--duration", "2s", "--warm-up", "0", "--interval", "1s", "--out", out, "--threshold", "errors<1%"],
    );
    assert.equal(closed.status, 0, closed.stderr);
    const [a] = resultFiles(mixedOut, ".json");
    const [b] = resultFiles(out, ".json");
    const result = JSON.parse(readFileSync(b as string, "utf8")) as LoadResult;
    const names = ["reads", "acs", "submit-async", "submit-and-wait-for-transaction", "completions"];
    // Each reassignment moves a contract a step on (unassign, then assign): every step succeeded.
    for (const name of [...names, "submit-and-wait-for-reassignment"]) {
      const s = result.scenarios[name];
      assert.ok(s && s.requests > 0, name);
      assert.equal(s.errors, 0, `${name}: ${JSON.stringify(s.errorsByCode)}`);
    }
    assert.equal(
      result.scenarios.completions?.requests,
      result.scenarios["submit-async"]?.requests,
      "a completion per command",
    );
    const compared = await load("--compare", a as string, b as string);
    assert.equal(compared.status, 0, compared.stderr);
    assert.match(compared.stdout, /^A: .*open model, 40\/s/m);
    assert.match(compared.stdout, /^B: .*closed model, 2 concurrent loops/m);
    assert.match(compared.stdout, /^reads +p99 ms +[\d.]+ +[\d.]+ +[\d.]+$/m);
    assert.match(compared.stdout, /^submit-and-wait +per second +[\d.]+ +- +-$/m);
    assert.match(compared.stdout, /^acs +errors +- +0 +-$/m);
  });

  it("mixes completion subscribers, ACS readers and the updates list twin in one run, each measured", async () => {
    const out = join(dir, "streams");
    const run = await load(
      ...["--url", stack.url, "--token-file", tokenFile, "--acs-contracts", "5"],
      ...["--scenario", "submit-async,updates-list,completions-stream,acs-stream"],
      ...["--rate", "20/s", "--subscribers", "3,acs-stream=2", "--duration", "2s", "--warm-up", "0"],
      ...["--interval", "1s", "--out", out, "--threshold", "errors<1"],
      ...["--threshold", "completions-stream.errors<1", "--threshold", "acs-stream.errors<1"],
    );
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stderr.split("\n").filter((line) => /^\[\s*\d+\.\d\/2 s\]/.test(line));
    assert.ok(lines.length >= 2, run.stderr);
    assert.match(lines[0] as string, /completion lag p50 [\d.]+m?s p99 [\d.]+m?s \(0 errors\)/);
    assert.match(
      lines[0] as string,
      /acs reads p50 [\d.]+m?s p99 [\d.]+m?s [\d.]+\/s \d+ contracts\/s \(0 errors\)/,
    );
    const [json] = resultFiles(out, ".json");
    const result = JSON.parse(readFileSync(json as string, "utf8")) as LoadResult;
    assert.deepEqual(result.load.streams, { "completions-stream": 3, "acs-stream": 2 });
    for (const name of ["submit-async", "updates-list", "completions", "completions-stream", "acs-stream"]) {
      const s = result.scenarios[name];
      assert.ok(s && s.requests > 0 && s.latencyMs.p50 > 0, name);
      assert.equal(s.errors, 0, `${name}: ${JSON.stringify(s.errorsByCode)}`);
    }
    // Every measured command's completion reached every completion subscriber.
    assert.equal(
      result.scenarios["completions-stream"]?.requests,
      3 * (result.scenarios["submit-async"]?.requests ?? 0),
    );
    // Each read had the acs party's 5 contracts.
    const acs = result.scenarios["acs-stream"];
    assert.equal(acs?.elements, 5 * (acs?.requests ?? 0));
    assert.ok((acs?.elementsPerSecond ?? 0) > 0);
    assert.ok(result.timeline.some((point) => (point.scenarios["acs-stream"]?.elements ?? 0) > 0));
    const [html] = resultFiles(out, ".html");
    const page = readFileSync(html as string, "utf8");
    assert.match(page, /completion lag: command sent -&gt; completion at each of 3 subscribers/);
    assert.match(page, /ACS snapshot reads: contracts received per second/);
  });

  it("answers --help with exit 0 and a bad flag or value with a usage line and exit 2", async () => {
    const help = await load("--help");
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: ledger-json-gateway bench .*\[--threshold VALUE \.\.\.\]/);
    assert.match(help.stdout, /--token-command 'CMD'/);
    const unknown = await load("--bogus");
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--bogus'.*\nusage: ledger-json-gateway bench/s);
    const near = await load("--tresholds", "p99<1ms");
    assert.equal(near.status, 2);
    assert.match(near.stderr, /^Unknown option '--tresholds'; did you mean --threshold\?\nusage: /);
    const rate = await load("--url", stack.url, "--token-file", tokenFile, "--rate", "lots");
    assert.equal(rate.status, 2);
    assert.match(
      rate.stderr,
      /^ledger-json-gateway bench: --rate takes a rate above 0 .*\nusage: ledger-json-gateway bench --url URL/,
    );
    const threshold = await load("--url", stack.url, "--token-file", tokenFile, "--threshold", "p99 is low");
    assert.equal(threshold.status, 2);
    assert.match(threshold.stderr, /--threshold 'p99 is low' is not \[SCENARIO\.\]METRIC<VALUE/);
    const compare = await load("--compare", "only-one.json");
    assert.equal(compare.status, 2);
    assert.match(compare.stderr, /--compare takes two results files/);
  });

  it("runs --token-command again before its token expires, and records neither", async () => {
    // A command minting a token of the admin's claims that lives 8 s, counting its calls: the run
    // (1 s of warm-up, 5 s measured) outlives the first token, and the sandbox refuses an expired one.
    const claims = JSON.parse(Buffer.from(stack.token.split(".")[1] as string, "base64url").toString("utf8"));
    const counter = join(dir, "mints");
    const mint = join(dir, "mint.cjs");
    writeFileSync(
      mint,
      `const { appendFileSync } = require("node:fs");
const { createHmac } = require("node:crypto");
appendFileSync(${JSON.stringify(counter)}, "x");
const part = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
const body = part({ alg: "HS256", typ: "JWT" }) + "." + part({ ...${JSON.stringify(claims)}, exp: Math.floor(Date.now() / 1000) + 8 });
console.log(body + "." + createHmac("sha256", "k").update(body).digest("base64url"));
`,
    );
    const out = join(dir, "renewed");
    const run = await load(
      ...[
        "--url",
        stack.url,
        "--token-command",
        `node ${mint}`,
        "--scenario",
        "reads,submit-and-wait,updates",
      ],
      ...[
        "--rate",
        "20/s",
        "--subscribers",
        "2",
        "--duration",
        "5s",
        "--warm-up",
        "1s",
        "--interval",
        "1s",
        "--out",
        out,
      ],
    );
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /token: renewed by --token-command before it expired/);
    // This gateway's streams take the renewed token in band (a refused renewal is an error frame).
    assert.match(run.stderr, /token: the renewed token sent in band to 2 streams/);
    assert.ok(readFileSync(counter, "utf8").length >= 2, "minted again");
    const [json] = resultFiles(out, ".json");
    const result = JSON.parse(readFileSync(json as string, "utf8")) as LoadResult;
    assert.equal(result.scenarios.reads?.errors, 0, JSON.stringify(result.scenarios.reads?.errorsByCode));
    assert.ok((result.scenarios.reads?.requests ?? 0) >= 45);
    assert.equal(result.scenarios.updates?.errors, 0, JSON.stringify(result.scenarios.updates?.errorsByCode));
    assert.equal(
      result.scenarios.updates?.requests,
      2 * (result.scenarios["submit-and-wait"]?.requests ?? 0),
    );
    assert.match(result.command, /--token-command '<not recorded>'/);
    assert.doesNotMatch(run.stderr + run.stdout, /eyJ/, "no token printed");
  });

  it("says why it cannot run when the token file is missing, with exit 1", async () => {
    const missing = await load("--url", stack.url, "--token-file", join(dir, "nope"), "--duration", "1s");
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^ledger-json-gateway bench: cannot read --token-file .*nope: ENOENT$/m);
  });

  it("is the gateway CLI's bench subcommand", async () => {
    const help = await new Promise<BenchRun>((resolve) =>
      execFile(
        process.execPath,
        ["--import", "tsx", join(ROOT, "src", "cli.ts"), "bench", "--help"],
        { cwd: ROOT, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ status: error ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: ledger-json-gateway bench /);
  });
});
