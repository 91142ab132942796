import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { bearer, type FuzzContext } from "./cases.js";
import { type FaultFigures, freezeLedger, killAndRestartLedger } from "./faults.js";
import { type Finding, type RunFigures, runFuzz } from "./fuzz-run.js";
import { startFuzzStack, watchLedger } from "./fuzz-stack.js";
import { HUGE_SIZES } from "./json-mutations.js";
import { knownFindingOf } from "./known-findings.js";
import { runSeed } from "./prng.js";
import { memoryOf, RssSampler } from "./processes.js";
import { type ChurnFigures, wsChurn } from "./ws-churn.js";

/**
 * `make soak`: the long fuzz run and the ledger faults, against a gateway process in front of a
 * sandbox process. Prints the figures and writes them to bench/results/fuzz-soak-<date>-<commit>.json.
 * FUZZ_SEED, FUZZ_REQUESTS (default 20000, split 3:1 between the unsafe and the hs256 set-ups),
 * FUZZ_CONCURRENCY (16), FUZZ_FAULT_SECONDS (8), FUZZ_WS_CYCLES (5000 short streams; then a
 * tenth of that held open at once). While the ledger is frozen or down, FAULT_LOAD more fuzz
 * cases run, where 503 and 504 are the ledger's condition, not a fault.
 */
const seed = runSeed();
const total = Number(process.env.FUZZ_REQUESTS ?? 20_000);
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 16);
const faultSeconds = Number(process.env.FUZZ_FAULT_SECONDS ?? 8);
const wsCycles = Number(process.env.FUZZ_WS_CYCLES ?? 5_000);
const FAULT_LOAD = 300;
const REQUEST_TIMEOUT_S = 5;
const DEADLINE_MS = (REQUEST_TIMEOUT_S + 15) * 1000;
const MiB = 1024 * 1024;

interface ModeFigures {
  auth: "unsafe" | "hs256";
  run: Omit<RunFigures, "failures"> & { failures: number };
  rss: { startMiB: number; peakMiB: number; endMiB: number };
  alive: boolean;
  control: Record<string, number>;
  gatewayErrorLogs: string[];
  /** Ledger deaths during the run (each a finding; the ledger was started again). */
  ledgerDeaths: number;
  tokensInLogs: number;
  wsChurn?: ChurnFigures;
  faults: FaultFigures[];
  /** The fuzz cases run while the ledger was frozen or down. */
  faultLoad?: Omit<RunFigures, "failures"> & { failures: number };
}

const log = (line: string) => process.stdout.write(`${line}\n`);

async function soakMode(auth: "unsafe" | "hs256", count: number, first: number, withFaults: boolean) {
  const stack = await startFuzzStack({
    auth,
    gatewayArgs: ["--server.request-timeout", `${REQUEST_TIMEOUT_S}s`],
  });
  try {
    const startRss = memoryOf(stack.gateway.pid)?.rss ?? 0;
    const sampler = new RssSampler(stack.gateway.pid);
    const ctx: FuzzContext = {
      model: stack.model,
      names: stack.names,
      tokens: stack.tokens,
      hugeSizes: [...HUGE_SIZES, 1_000_000],
      hugeFrameBytes: 16 * MiB,
      maxQueryFrameBytes: MiB,
    };
    let phase: "clean" | "fault" = "clean";
    // The fault-time load runs the same way, judged by the phase it runs in.
    const execution = {
      port: stack.gateway.port,
      deadlineMs: DEADLINE_MS,
      phase: () => phase,
      openStreamMs: 500,
      refusalDeadlineMs: 5_000,
    };
    log(`[${auth}] fuzzing ${count} cases from index ${first}, seed ${seed}, ${concurrency} at a time`);
    const run = await runFuzz({
      seed,
      count,
      first,
      concurrency,
      ctx,
      execution,
      ledger: watchLedger(stack),
      after: (_c, _r, done) => {
        if (done % 1000 === 0)
          log(`[${auth}] ${done}/${count}, RSS ${(sampler.peak() / MiB).toFixed(0)} MiB peak`);
      },
    });
    const faults: FaultFigures[] = [];
    let churn: ChurnFigures | undefined;
    const faultFailures: Finding[] = [];
    let faultLoad: ModeFigures["faultLoad"];
    if (withFaults) {
      const token = bearer(ctx);
      log(
        `[${auth}] WebSocket churn: ${wsCycles} short streams, then ${Math.round(wsCycles / 10)} held open`,
      );
      churn = await wsChurn(stack, token, wsCycles, Math.round(wsCycles / 10));
      phase = "fault";
      const load = (from: number) =>
        runFuzz({
          seed,
          count: FAULT_LOAD,
          first: from,
          concurrency: 4,
          ctx,
          execution,
        });
      log(`[${auth}] freezing the ledger for ${faultSeconds} s, with ${FAULT_LOAD} fuzz cases meanwhile`);
      const [freeze, frozenLoad] = await Promise.all([
        freezeLedger(stack, token, faultSeconds),
        load(first + count),
      ]);
      faults.push(freeze);
      log(
        `[${auth}] killing the ledger, restarting it after ${faultSeconds} s, with ${FAULT_LOAD} fuzz cases meanwhile`,
      );
      const [kill, downLoad] = await Promise.all([
        killAndRestartLedger(stack, token, faultSeconds),
        load(first + count + FAULT_LOAD),
      ]);
      faults.push(kill);
      phase = "clean";
      faultFailures.push(...frozenLoad.failures, ...downLoad.failures);
      const answers: Record<string, number> = {};
      for (const part of [frozenLoad, downLoad])
        for (const [answer, n] of Object.entries(part.answers)) answers[answer] = (answers[answer] ?? 0) + n;
      faultLoad = {
        ...frozenLoad,
        cases: frozenLoad.cases + downLoad.cases,
        http: frozenLoad.http + downLoad.http,
        ws: frozenLoad.ws + downLoad.ws,
        answers,
        wallSeconds: frozenLoad.wallSeconds + downLoad.wallSeconds,
        slowestMs: Math.max(frozenLoad.slowestMs, downLoad.slowestMs),
        failures: faultFailures.length,
      };
    }
    const control: Record<string, number> = {};
    for (const path of ["/livez", "/readyz", "/v2/version", "/v2/state/ledger-end"])
      control[path] = await stack.control(path);
    const peak = sampler.peak();
    sampler.stop();
    const figures: ModeFigures = {
      auth,
      run: { ...run, failures: run.failures.length },
      rss: {
        startMiB: round(startRss / MiB),
        peakMiB: round(peak / MiB),
        endMiB: round((memoryOf(stack.gateway.pid)?.rss ?? 0) / MiB),
      },
      alive: stack.gateway.alive(),
      control,
      gatewayErrorLogs: stack.gateway
        .errors()
        .map((e) => `${e.msg}${e.err ? `: ${JSON.stringify(e.err).slice(0, 300)}` : ""}`),
      ledgerDeaths: run.failures.filter((f) => f.category === "ledger-crash").length,
      tokensInLogs: stack.gateway.lines.filter((line) => /eyJ[A-Za-z0-9_-]{10,}\./.test(line)).length,
      ...(churn ? { wsChurn: churn } : {}),
      faults,
      ...(faultLoad ? { faultLoad } : {}),
    };
    return { figures, failures: [...run.failures, ...faultFailures] };
  } finally {
    await stack.stop();
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "test/fuzz"], {
      encoding: "utf8",
    }).trim();
    return dirty === "" ? sha : `${sha}-dirty`;
  } catch {
    return "unknown";
  }
}

const unsafeCount = Math.round((total * 3) / 4);
const started = new Date();
const unsafe = await soakMode("unsafe", unsafeCount, 0, true);
const hs256 = await soakMode("hs256", total - unsafeCount, unsafeCount, false);
const failures = [...unsafe.failures, ...hs256.failures];
const known: Record<string, number> = {};
const unexplained: Finding[] = [];
for (const f of failures) {
  const finding = knownFindingOf(f);
  if (finding === undefined) unexplained.push(f);
  else known[finding.id] = (known[finding.id] ?? 0) + 1;
}
const result = {
  kind: "fuzz-soak",
  command: `make soak FUZZ_SEED=${seed} FUZZ_REQUESTS=${total} FUZZ_CONCURRENCY=${concurrency} FUZZ_FAULT_SECONDS=${faultSeconds} FUZZ_WS_CYCLES=${wsCycles}`,
  commit: commit(),
  date: started.toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "", node: process.version },
  seed,
  modes: [unsafe.figures, hs256.figures],
  knownFindings: known,
  unexplained,
  failures,
};
const file = `bench/results/fuzz-soak-${started.toISOString().replace(/:/g, "-").replace(/\..*/, "Z")}-${result.commit}.json`;
mkdirSync("bench/results", { recursive: true });
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
log("");
for (const mode of result.modes) {
  log(
    `== ${mode.auth}: ${mode.run.cases} cases (${mode.run.http} HTTP, ${mode.run.ws} WebSocket) in ${mode.run.wallSeconds} s`,
  );
  log(`   answers: ${JSON.stringify(mode.run.answers)}`);
  log(
    `   failures: ${mode.run.failures}; RSS ${mode.rss.startMiB} -> peak ${mode.rss.peakMiB} -> ${mode.rss.endMiB} MiB; alive ${mode.alive}; control ${JSON.stringify(mode.control)}`,
  );
  log(
    `   ledger deaths: ${mode.ledgerDeaths}; gateway error logs: ${JSON.stringify(mode.gatewayErrorLogs)}; JWTs in logs: ${mode.tokensInLogs}`,
  );
  if (mode.wsChurn) log(`   WebSocket churn: ${JSON.stringify(mode.wsChurn)}`);
  for (const fault of mode.faults)
    log(
      `   ${fault.kind} ${fault.faultSeconds} s: during ${JSON.stringify(fault.during)}; stream ${JSON.stringify(fault.stream)}; recovery ${JSON.stringify(fault.recoverySeconds)}`,
    );
  if (mode.faultLoad)
    log(
      `   fuzz cases during the faults: ${mode.faultLoad.cases}, answers ${JSON.stringify(mode.faultLoad.answers)}, failures ${mode.faultLoad.failures}`,
    );
}
log(`known findings (test/fuzz/known-findings.ts): ${JSON.stringify(known)}`);
log(`unexplained failures: ${unexplained.length}`);
for (const f of unexplained.slice(0, 30))
  log(
    `  seed ${f.seed} case ${f.index} [${f.category}] ${f.label}: ${f.failure} (${f.answer})\n    ${f.request}\n    ${f.detail ?? ""}`,
  );
log(`written to ${file}`);
process.exitCode = unexplained.length === 0 && result.modes.every((m) => m.alive) ? 0 : 1;
