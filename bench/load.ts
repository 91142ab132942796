/**
 * `ledger-json-gateway bench`, the load tester of any JSON Ledger API deployment (this gateway,
 * or Canton's own JSON API), a server it did not start: `ledger-json-gateway bench --url URL
 * --token-file T --scenario submit-and-wait,updates --rate 200/s --subscribers 100 --duration
 * 60s` (the CLI runs this file, dist/bench/load.js, in a process of its own).
 * docs/load-testing.md is its guide. `bench merge A.json B.json ...` merges runs made from
 * several machines. `load.js local ...` (`make bench`) runs the gateway's own comparison against
 * direct gRPC on processes it starts itself (bench/rig/command.ts): one harness for both.
 * Exit status: 0; 1 when a threshold is breached, a regression gate fails or the run could not
 * be made (the fault on stderr); 2 for a command line it cannot run (the fault and the usage
 * line on stderr); 128 + the signal's number when a signal stopped the run (partial results
 * written).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { commandLine } from "./lib/command-line.js";
import { compareFiles, readResult } from "./load/compare-runs.js";
import { defaultOutDir } from "./load/default-out.js";
import { LiveMetrics } from "./load/live-metrics.js";
import { loadOptions, parsePercentiles, REQUEST_SCENARIOS } from "./load/load-options.js";
import type { LoadResult } from "./load/load-result.js";
import { mergeRuns } from "./load/merge-runs.js";
import { RawSamples } from "./load/raw-samples.js";
import { parseRegressionLimits } from "./load/regression-gate.js";
import { runLoad } from "./load/run-load.js";
import { runStem, summaryLines, writeRun } from "./load/run-summary.js";
import { WORKFLOW_NAMES } from "./load/scenario-options.js";
import { stormCommand } from "./load/storm-command.js";
import { judgeAll, parseThreshold } from "./load/thresholds.js";
import { UsageError } from "./load/usage-error.js";
import { localCommand } from "./rig/command.js";

const TOOL = "ledger-json-gateway bench";

const HELP = `Runs scenarios against a JSON Ledger API server it did not start and reports latency
(HDR histograms, from each request's intended send time), throughput against the offered rate,
errors by code, the update and completion subscribers' lag and the ACS readers' reads; writes
DIR/load-<time>.json, .html and .ndjson (the raw per-interval samples).

  --url URL               the server, e.g. http://127.0.0.1:7575 (required)
  --token-file FILE       the run's token; read again when the file changes (without --party: a
                          user with participant_admin, as the run allocates its parties)
  --token-command 'CMD'   or a command printing one, run again before the token's exp
  --party P[=FILE]        act as this existing party (repeat, or a list): no admin call at all;
                          =FILE its own token (else --party-token-command's, else the run's)
  --party-token-command 'CMD'  run once per party (and before each token's exp) with LOAD_PARTY set
  --prepare-parties N     without --party: parties the run allocates and acts as (default 1)
  --scenario LIST         mixed in one run (default submit-and-wait,updates); workflows (chains of
                          commands): ${WORKFLOW_NAMES.join(", ")}, or a --scenario-file's;
                          requests (sharing the rate): ${REQUEST_SCENARIOS.slice(0, 2).join(", ")},
                          ${REQUEST_SCENARIOS.slice(2, 4).join(", ")},
                          ${REQUEST_SCENARIOS.slice(4).join(", ")};
                          streams: updates (/v2/updates subscribers: lag), completions-stream
                          (/v2/commands/completions subscribers: lag; not \`completions\`, which is
                          submit-async's own completions series), acs-stream (readers of the ACS
                          snapshot over WebSocket, again and again: latency per read, contracts/s)
  --mix NAME=W,NAME@R,... request scenarios' and workflows' shares: a weight of the rate (or of the
                          loops), or a rate of their own (open model), e.g. 'iou-transfer=3,iou-merge@5/s'
  --scenario-file FILE    workflows of your own (YAML or JSON: steps as JSON Ledger API requests with
                          {{placeholders}}); without --scenario/--mix naming some, all of its scenarios
  --rate R                open model: requests per second of all request scenarios together, e.g.
                          200/s (the default, without --stages or --concurrency: 100/s)
  --stages D:R,...        open model ramping: each stage goes to its rate over its duration (10s:100/s,30s:500/s)
  --concurrency N         closed model: N loops, each sending its next request when the last answered
  --max-in-flight N       open model: requests out at most (default 1000); an arrival due past it is
                          not sent and counted as dropped; any dropped, or answers under 95% of the
                          offered rate, flags the run OVERLOADED
  --subscribers N[,S=N]   streams of each stream scenario: N for each (--subscribers 100 is a run's
                          crowd, whichever streams it holds), or a count of its own, e.g.
                          100,acs-stream=4 (an ACS reader reads a whole snapshot again and again)
  --duration D            measured time (500ms, 30s, 2m); with --stages, their sum
  --warm-up D             sent before it and not recorded
  --interval D            one progress line, one timeline point and one raw sample per series per interval
  --out DIR               where the results go (default ${defaultOutDir()},
                          i.e. $XDG_STATE_HOME/ledger-json-gateway/bench: not the working directory)
  --percentiles LIST      shown in the progress line, the summary and the report (default p50,p95,p99,p99.9)
  --threshold EXPR        [SCENARIO.]METRIC<VALUE, several allowed: p95<50ms (any pNN or pNN.N),
                          submit-and-wait.p99.9<200ms, errors<1%, rate>=190, dropped<1%, achieved>=95%,
                          updates.p99<100ms (lag), completions-stream.p99<100ms, acs-stream.p99<1s
                          (a read); one breached: exit 1
  --abort-on-fail         stop the run at an interval's end when the run so far breaches a threshold
                          (a count such as errors<10 at once, the others from the second interval)
  --metrics-port PORT     serve the live figures for Prometheus on PORT/metrics while the run lasts
                          (0: any free port, printed)
  --connections N         HTTP keep-alive connections to the server
  --acs-contracts N       contracts created beforehand for acs, acs-stream and updates-list to read
                          (updates-list lists their creations, a fixed range, in each request)
  --reassignment-contracts N  contracts the reassignment scenario moves between two synchronizers,
                          one per request in flight (a request waits for a free one)
  --template ID           a template to create instead of the sample Iou (#pkg-name:Module:Entity)
  --create-arguments JSON its create arguments; the string "$party" stands for the run's party
  --compare A.json B.json two results files side by side (nothing else is run): two load runs, or two
                          comparisons of \`local\` (bench/results/gateway-*.json, every age of them)
  --max-regression M=N%   with --compare: exit 1 when B is worse than A by more than N% (p99=10%,
                          submit-and-wait.p95=5%, errors=0%, rate=10%: a rate regresses down)

  merge A.json B.json ... runs made at once from several machines as one result and report
                          (counts added, percentiles from the added histograms); takes --out,
                          --threshold and --percentiles
  local ...               the gateway against direct gRPC on a sandbox and gateways it starts itself
                          (make bench): \`node dist/bench/load.js local --help\` lists its flags
  storm ...               a reconnect storm against the server: N WebSockets on /v2/updates at once,
                          time to every first element, 503s retried (\`${TOOL} storm --help\`)

A first SIGINT or SIGTERM stops the load and finishes the run (answers in flight, rights given
back, partial results written: exit 130 or 143); a second one quits at once.`;

const LOAD_FLAGS = {
  url: { type: "string" },
  "token-file": { type: "string" },
  "token-command": { type: "string" },
  scenario: { type: "string" },
  mix: { type: "string" },
  "scenario-file": { type: "string" },
  party: { type: "string", multiple: true },
  "party-token-command": { type: "string" },
  "prepare-parties": { type: "string" },
  rate: { type: "string" },
  stages: { type: "string" },
  concurrency: { type: "string" },
  "max-in-flight": { type: "string" },
  subscribers: { type: "string", default: "10" },
  duration: { type: "string", default: "60s" },
  "warm-up": { type: "string", default: "5s" },
  interval: { type: "string", default: "5s" },
  out: { type: "string" },
  percentiles: { type: "string" },
  threshold: { type: "string", multiple: true },
  "abort-on-fail": { type: "boolean" },
  "metrics-port": { type: "string" },
  connections: { type: "string", default: "64" },
  "acs-contracts": { type: "string", default: "100" },
  "reassignment-contracts": { type: "string", default: "64" },
  template: { type: "string" },
  "create-arguments": { type: "string" },
  compare: { type: "string" },
  "max-regression": { type: "string", multiple: true },
} as const;

const MERGE_FLAGS = {
  out: { type: "string" },
  threshold: { type: "string", multiple: true },
  percentiles: { type: "string" },
} as const;

const USAGE_LINE = `usage: ${TOOL} --url URL (--token-file FILE | --token-command CMD) [--scenario LIST] [--rate R | --stages D:R,... | --concurrency N] ... (--help lists them)`;

function usageFault(message: string): never {
  process.stderr.write(`${TOOL}: ${message}\n${USAGE_LINE}\n`);
  process.exit(2);
}

/** Runs a command to its end: exit at once after (streams and sockets are closed), 1 on a fault. */
function finish(run: Promise<void>): void {
  run.then(
    () => process.exit(),
    (error: Error) => {
      process.stderr.write(`${TOOL}: ${error.message}\n`);
      process.exit(1);
    },
  );
}

/** The command line as the results file keeps it: the token commands' values left out (they may hold a secret). */
function recordedCommand(): string {
  const args = process.argv.slice(2);
  return [
    TOOL,
    ...args.map((arg, i) =>
      args[i - 1] === "--token-command" || args[i - 1] === "--party-token-command"
        ? "'<not recorded>'"
        : /^--(party-)?token-command=/.test(arg)
          ? `${arg.slice(0, arg.indexOf("="))}=<not recorded>`
          : /[\s'"]/.test(arg)
            ? `'${arg}'`
            : arg,
    ),
  ].join(" ");
}

const SIGNAL_STATUS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * SIGINT (Ctrl-C), SIGTERM (CI's cancel, `timeout`, `docker stop`) and SIGHUP (the terminal
 * closed, passed on by the CLI) alike: the first ends the
 * load and lets the run finish (answers in flight, rights given back, results written); a second
 * quits at once. Answers the signal that stopped the run, once one has.
 */
function stopOnSignals(log: (line: string) => void): {
  signal: AbortSignal;
  by: () => keyof typeof SIGNAL_STATUS | undefined;
} {
  const stop = new AbortController();
  let by: keyof typeof SIGNAL_STATUS | undefined;
  for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.on(name, () => {
      if (stop.signal.aborted) process.exit(SIGNAL_STATUS[name]);
      by = name;
      log(
        `${TOOL}: ${name}: finishing (answers in flight, rights given back, results written); a second signal quits now`,
      );
      stop.abort();
    });
  return { signal: stop.signal, by: () => by };
}

function loadCommand(): void {
  const { values, positionals } = commandLine(TOOL, LOAD_FLAGS, "", HELP);
  if (values.compare !== undefined) {
    if (positionals.length !== 1) usageFault("--compare takes two results files: --compare A.json B.json");
    let limits: ReturnType<typeof parseRegressionLimits>;
    try {
      limits = parseRegressionLimits(values["max-regression"] ?? []);
    } catch (error) {
      usageFault((error as Error).message);
    }
    finish(
      (async () => {
        const compared = compareFiles(values.compare as string, positionals[0] as string, limits);
        process.stdout.write(compared.text);
        if (!compared.passed) {
          process.stderr.write(`${TOOL}: regression beyond --max-regression\n`);
          process.exitCode = 1;
        }
      })(),
    );
    return;
  }
  if (values["max-regression"] !== undefined)
    usageFault("--max-regression goes with --compare A.json B.json");
  if (positionals.length > 0) usageFault(`unexpected argument '${positionals[0]}'`);
  let options: ReturnType<typeof loadOptions>;
  try {
    options = loadOptions(values);
  } catch (error) {
    if (error instanceof UsageError) usageFault(error.message);
    throw error;
  }
  finish(load(options));
}

async function load(options: ReturnType<typeof loadOptions>): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const stop = stopOnSignals(log);
  const stem = runStem(new Date());
  const raw = new RawSamples(join(options.outDir, `${stem}.ndjson`));
  let metrics: LiveMetrics | undefined;
  if (options.metricsPort !== undefined) {
    metrics = new LiveMetrics();
    const port = await metrics.listen(options.metricsPort);
    log(`${TOOL}: live metrics on http://0.0.0.0:${port}/metrics while the run lasts`);
  }
  let result: LoadResult;
  try {
    result = await runLoad(options, recordedCommand(), log, stop.signal, {
      raw,
      ...(metrics && { metrics }),
    });
  } finally {
    await metrics?.close();
  }
  result.thresholds = judgeAll(options.thresholds, result);
  const paths = writeRun(result, options.outDir, stem);
  process.stdout.write(
    `${[
      `results: ${paths.json}`,
      `report: ${paths.html}`,
      ...(existsSync(raw.path) ? [`raw samples: ${raw.path}`] : []),
      ...summaryLines(result),
    ].join("\n")}\n`,
  );
  const signal = stop.by();
  if (signal !== undefined) {
    process.stderr.write(
      `${TOOL}: stopped by ${signal} before the end of its window: partial results written\n`,
    );
    process.exitCode = SIGNAL_STATUS[signal];
    return;
  }
  failOnBreach(result);
}

/** Exit status 1 when a threshold is breached, naming each. */
function failOnBreach(result: LoadResult): void {
  const breached = result.thresholds.filter((verdict) => !verdict.passed);
  if (breached.length > 0) {
    process.stderr.write(
      `${TOOL}: threshold breached: ${breached.map((v) => `${v.threshold} (measured ${v.actual})`).join(", ")}\n`,
    );
    process.exitCode = 1;
  }
}

/** `bench merge A.json B.json ...`: one result and report of runs made at once from several machines. */
function mergeCommand(): void {
  const { values, positionals } = commandLine(`${TOOL} merge`, MERGE_FLAGS, "A.json B.json ...", HELP);
  if (positionals.length < 2) usageFault("merge takes two results files or more: merge A.json B.json ...");
  let thresholds: ReturnType<typeof parseThreshold>[];
  let percentiles: number[] | undefined;
  try {
    thresholds = (values.threshold ?? []).map(parseThreshold);
    if (values.percentiles !== undefined) percentiles = parsePercentiles(values.percentiles);
  } catch (error) {
    usageFault((error as Error).message);
  }
  finish(
    (async () => {
      const runs = positionals.map((file) => {
        const read = readResult(file);
        if (read.kind !== "load") throw new Error(`${file} is a comparison (local), not a load run`);
        return { file, result: read.result };
      });
      const result = mergeRuns(runs, percentiles);
      result.thresholds = judgeAll(thresholds, result);
      const paths = writeRun(result, values.out ?? defaultOutDir(), `${runStem(new Date())}-merged`);
      process.stdout.write(
        `${[`results: ${paths.json}`, `report: ${paths.html}`, ...summaryLines(result)].join("\n")}\n`,
      );
      failOnBreach(result);
    })(),
  );
}

if (process.argv[2] === "storm") {
  process.argv.splice(2, 1);
  stormCommand().then(
    (status) => process.exit(status),
    (error: Error) => {
      process.stderr.write(`${TOOL} storm: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
} else if (process.argv[2] === "local") {
  // commandLine reads process.argv: the subcommand's flags are what follows its name.
  process.argv.splice(2, 1);
  localCommand().then(
    // The processes it started are stopped; nothing it opened should hold the process.
    (status) => process.exit(status),
    (error: Error) => {
      process.stderr.write(`load local: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
} else if (process.argv[2] === "merge") {
  process.argv.splice(2, 1);
  mergeCommand();
} else {
  loadCommand();
}
