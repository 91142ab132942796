import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FuzzContext } from "./cases.js";
import { type ExecuteOptions, execute } from "./execute.js";
import { crashFinding, type Finding, findingOf, type RunFigures, runFuzz } from "./fuzz-run.js";
import { FUZZ_WORKERS, type FuzzStack, startFuzzStack, watchLedger } from "./fuzz-stack.js";
import { HUGE_SIZES } from "./json-mutations.js";
import { KNOWN_FINDINGS, knownFindingOf } from "./known-findings.js";
import { runSeed } from "./prng.js";
import { RssSampler } from "./processes.js";

/**
 * The bounded fuzz run of `make test` (the long one is `make soak`): seeded cases over bodies,
 * paths, queries, headers, tokens, methods, request lines and WebSocket frames, against a
 * gateway process in front of a sandbox process, over real sockets. FUZZ_SEED replays a run
 * (default: a fixed seed, so that the known findings below are the same on every machine);
 * FUZZ_REQUESTS sets its size (default 2000: 1500 on the default set-up, 500 with HS256
 * verification on both sides).
 */
const DEFAULT_SEED = 20261123;
const seed = process.env.FUZZ_SEED === undefined ? DEFAULT_SEED : runSeed();
const total = Number(process.env.FUZZ_REQUESTS ?? 2_000);
/**
 * Resident memory the gateway process may reach: it starts near 290 MiB (two worker threads),
 * and the largest case here is a few MB; far above is a leak or an unbounded read.
 */
const RSS_LIMIT_MIB = Number(process.env.FUZZ_RSS_LIMIT_MIB ?? 600);
const MiB = 1024 * 1024;
const REQUEST_TIMEOUT_S = 5;

interface ModeRun {
  stack: FuzzStack;
  ctx: FuzzContext;
  execution: ExecuteOptions;
  figures: RunFigures;
  peakMiB: number;
}

async function fuzzMode(auth: "unsafe" | "hs256", count: number, first: number): Promise<ModeRun> {
  const stack = await startFuzzStack({
    auth,
    // Debug logs too: no level may carry a token.
    gatewayArgs: ["--server.request-timeout", `${REQUEST_TIMEOUT_S}s`, "--log.level", "debug"],
  });
  const sampler = new RssSampler(stack.gateway.pid);
  const ctx: FuzzContext = {
    model: stack.model,
    names: stack.names,
    tokens: stack.tokens,
    hugeSizes: HUGE_SIZES,
    hugeFrameBytes: 2 * MiB,
    maxQueryFrameBytes: MiB,
  };
  const execution: ExecuteOptions = {
    port: stack.gateway.port,
    // Generous: a hang is minutes, not a slow answer on a loaded machine.
    deadlineMs: (REQUEST_TIMEOUT_S + 15) * 1000,
    refusalDeadlineMs: 3_000,
    phase: () => "clean",
    openStreamMs: 300,
  };
  const figures = await runFuzz({
    seed,
    count,
    first,
    concurrency: 16,
    ctx,
    execution,
    ledger: watchLedger(stack),
  });
  const peakMiB = sampler.peak() / MiB;
  sampler.stop();
  return { stack, ctx, execution, figures, peakMiB };
}

function report(f: Finding): string {
  return `seed ${f.seed} case ${f.index} [${f.category}] ${f.label}: ${f.failure} (answer ${f.answer})\n    ${f.request}\n    ${f.detail ?? ""}`;
}

describe(`fuzz (seed ${seed}, ${total} cases; FUZZ_SEED=${seed} replays it)`, () => {
  const runs: ModeRun[] = [];
  const unsafeCount = Math.round((total * 3) / 4);

  before(async () => {
    process.stdout.write(`# fuzz seed ${seed} (FUZZ_SEED), ${total} cases (FUZZ_REQUESTS)\n`);
    runs.push(await fuzzMode("unsafe", unsafeCount, 0));
    runs.push(await fuzzMode("hs256", total - unsafeCount, unsafeCount));
  });

  after(async () => {
    for (const run of runs) await run.stack.stop();
  });

  it("answers every case within its deadline, with no 5xx for a client's fault, or only known findings", () => {
    const failures = runs.flatMap((run) => run.figures.failures);
    const unexplained = failures.filter((f) => knownFindingOf(f) === undefined);
    for (const run of runs)
      process.stdout.write(
        `# ${JSON.stringify({ ...run.figures, failures: run.figures.failures.length })}\n`,
      );
    assert.equal(
      unexplained.length,
      0,
      `${unexplained.length} new findings (write them up in /work/notes/fuzz-findings.md and fix them, or add them to known-findings.ts):\n${unexplained.slice(0, 20).map(report).join("\n")}`,
    );
    assert.equal(
      runs.reduce((sum, run) => sum + run.figures.cases, 0),
      total,
    );
  });

  it("keeps the gateway alive, its RSS bounded, and serves a control request afterwards", async () => {
    for (const run of runs) {
      assert.ok(run.stack.gateway.alive(), "the gateway process is alive");
      assert.ok(watchLedger(run.stack).alive(), "the ledger process is alive");
      assert.ok(run.peakMiB < RSS_LIMIT_MIB, `peak RSS ${run.peakMiB.toFixed(0)} MiB < ${RSS_LIMIT_MIB} MiB`);
      for (const path of ["/livez", "/readyz", "/v2/version", "/v2/state/ledger-end"])
        assert.equal(await run.stack.control(path), 200, `control GET ${path}`);
      const logged = run.stack.gateway.errors().map((e) => e.msg);
      // A socket lost inside its corked upgrade (uWebSockets#1929) is logged, once a worker at
      // most, after which that worker upgrades uncorked (docs/performance.md, the corked upgrade):
      // not the fuzz input's doing, and seen once in a CI run. Anything else is a finding.
      const lostInUpgrade = logged.filter((msg) =>
        msg.startsWith("WebSocket closed by uWS inside its upgrade"),
      );
      assert.ok(
        lostInUpgrade.length <= FUZZ_WORKERS,
        `${lostInUpgrade.length} sockets lost in their upgrades`,
      );
      assert.deepEqual(
        logged.filter((msg) => !lostInUpgrade.includes(msg)),
        [],
        "no error logged by the gateway",
      );
    }
  });

  it("writes no token to its logs, at debug level included", () => {
    for (const run of runs) {
      const leaking = run.stack.gateway.lines.filter((line) => /eyJ[A-Za-z0-9_-]{10,}\./.test(line));
      assert.deepEqual(leaking.slice(0, 3), [], "log lines carrying a JWT");
    }
  });
  // Last: an example may kill the ledger (one known finding does).
  it("still fails every known finding's example request (a fixed one must leave known-findings.ts)", async () => {
    const [run] = runs;
    assert.ok(run !== undefined);
    const ledger = watchLedger(run.stack);
    const gone: string[] = [];
    for (const known of KNOWN_FINDINGS) {
      const example = known.example(run.ctx);
      let finding: Finding | undefined;
      for (
        let attempt = 0;
        attempt < (known.attempts ?? 1) && !(finding && known.matches(finding));
        attempt++
      ) {
        const result = await execute(example, run.execution);
        await new Promise((resolve) => setTimeout(resolve, result.failure === undefined ? 0 : 500));
        finding = findingOf(seed, example, result);
        if (!ledger.alive()) {
          finding = crashFinding(seed, [example], ledger.output());
          await run.stack.reviveLedger();
        }
      }
      if (finding === undefined || !known.matches(finding))
        gone.push(`${known.id}: ${finding?.failure ?? "passes"}`);
    }
    assert.deepEqual(
      gone,
      [],
      "these known findings no longer happen: remove them from test/fuzz/known-findings.ts and /work/notes/fuzz-findings.md",
    );
  });
});
