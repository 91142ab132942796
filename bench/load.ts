/**
 * The load tester of any JSON Ledger API deployment (this gateway, or Canton's own JSON API), a
 * server it did not start: `node dist/bench/load.js --url URL --token-file T --scenario
 * submit-and-wait,updates --rate 200/s --subscribers 100 --duration 60s --out DIR`, or
 * `ledger-json-gateway bench ...`. docs/load-testing.md is its guide. `load.js local ...` (`make
 * bench`) runs the gateway's own comparison against direct gRPC on processes it starts itself
 * (bench/load/local-command.ts): one harness for both. Exit status: 0, 1 when a threshold is
 * breached or the run could not be made (the fault on stderr), 2 for a command line it cannot
 * run (the fault and the usage line on stderr).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandLine } from "./lib/command-line.js";
import { machine } from "./lib/results.js";
import { compareFiles } from "./load/compare-runs.js";
import { htmlReport } from "./load/html-report.js";
import { loadOptions, REQUEST_SCENARIOS } from "./load/load-options.js";
import type { LoadResult } from "./load/load-result.js";
import { localCommand } from "./load/local-command.js";
import { runLoad } from "./load/run-load.js";
import { stormCommand } from "./load/storm-command.js";
import { judge } from "./load/thresholds.js";
import { UsageError } from "./load/usage-error.js";

const HELP = `Runs scenarios against a JSON Ledger API server it did not start and reports latency
(HDR histograms, from each request's intended send time), throughput, errors by code, the
update and completion subscribers' lag and the ACS readers' reads; writes DIR/load-<time>.json
and DIR/load-<time>.html.

  --url URL               the server, e.g. http://127.0.0.1:7575 (required)
  --token-file FILE       a token of a user with participant_admin; read again when the file changes
  --token-command 'CMD'   or a command printing one, run again before the token's exp
  --scenario LIST         mixed in one run; requests (sharing the rate): ${REQUEST_SCENARIOS.slice(0, 2).join(", ")},
                          ${REQUEST_SCENARIOS.slice(2, 4).join(", ")},
                          ${REQUEST_SCENARIOS.slice(4).join(", ")};
                          streams: updates (/v2/updates subscribers: lag), completions-stream
                          (/v2/commands/completions subscribers: lag; not \`completions\`, which is
                          submit-async's own completions series), acs-stream (readers of the ACS
                          snapshot over WebSocket, again and again: latency per read, contracts/s)
  --rate R                open model: requests per second of all request scenarios together, e.g.
                          200/s (the default, without --stages or --concurrency: 100/s)
  --stages D:R,...        open model ramping: each stage goes to its rate over its duration (10s:100/s,30s:500/s)
  --concurrency N         closed model: N loops, each sending its next request when the last answered
  --subscribers N[,S=N]   streams of each stream scenario: N for each (--subscribers 100 is a run's
                          crowd, whichever streams it holds), or a count of its own, e.g.
                          100,acs-stream=4 (an ACS reader reads a whole snapshot again and again)
  --duration D            measured time (500ms, 30s, 2m); with --stages, their sum
  --warm-up D             sent before it and not recorded
  --interval D            one progress line and one timeline point per interval
  --out DIR               where the JSON results and the HTML report go
  --threshold EXPR        [SCENARIO.]METRIC<VALUE, several allowed: p99<50ms, submit-and-wait.p99.9<200ms,
                          errors<1%, rate>=190, updates.p99<100ms (lag), completions-stream.p99<100ms,
                          acs-stream.p99<1s (a read); one breached: exit 1
  --connections N         HTTP keep-alive connections to the server
  --acs-contracts N       contracts created beforehand for acs, acs-stream and updates-list to read
                          (updates-list lists their creations, a fixed range, in each request)
  --reassignment-contracts N  contracts the reassignment scenario moves between two synchronizers,
                          one per request in flight (a request waits for a free one)
  --template ID           a template to create instead of the sample Iou (#pkg-name:Module:Entity)
  --create-arguments JSON its create arguments; the string "$party" stands for the run's party
  --compare A.json B.json two results files side by side (nothing else is run): two load runs, or two
                          comparisons of \`local\` (bench/results/gateway-*.json, every age of them)

  local ...               the gateway against direct gRPC on a sandbox and gateways it starts itself
                          (make bench): \`node dist/bench/load.js local --help\` lists its flags
  storm ...               a reconnect storm against the server: N WebSockets on /v2/updates at once,
                          time to every first element, 503s retried (\`load.js storm --help\`)`;

const LOAD_FLAGS = {
  url: { type: "string" },
  "token-file": { type: "string" },
  "token-command": { type: "string" },
  scenario: { type: "string", default: "submit-and-wait,updates" },
  rate: { type: "string" },
  stages: { type: "string" },
  concurrency: { type: "string" },
  subscribers: { type: "string", default: "10" },
  duration: { type: "string", default: "60s" },
  "warm-up": { type: "string", default: "5s" },
  interval: { type: "string", default: "5s" },
  out: { type: "string", default: "load-results" },
  threshold: { type: "string", multiple: true },
  connections: { type: "string", default: "64" },
  "acs-contracts": { type: "string", default: "100" },
  "reassignment-contracts": { type: "string", default: "64" },
  template: { type: "string" },
  "create-arguments": { type: "string" },
  compare: { type: "string" },
} as const;

function loadCommand(): void {
  const { values, positionals } = commandLine("load.js", LOAD_FLAGS, "", HELP);
  main(values, positionals).then(
    // Streams and keep-alive sockets are closed; nothing the run started should hold the process.
    () => process.exit(),
    (error: Error) => {
      process.stderr.write(`load: ${error.message}\n`);
      process.exit(1);
    },
  );
}

const USAGE_LINE =
  "usage: node dist/bench/load.js --url URL (--token-file FILE | --token-command CMD) [--scenario LIST] [--rate R | --stages D:R,... | --concurrency N] ... (--help lists them)";

function usageFault(message: string): never {
  process.stderr.write(`load: ${message}\n${USAGE_LINE}\n`);
  process.exit(2);
}

/** The command line as the results file keeps it: --token-command's value left out (it may hold a secret). */
function recordedCommand(): string {
  const args = process.argv.slice(2);
  return [
    "node dist/bench/load.js",
    ...args.map((arg, i) =>
      args[i - 1] === "--token-command"
        ? "'<not recorded>'"
        : arg.startsWith("--token-command=")
          ? "--token-command=<not recorded>"
          : /[\s'"]/.test(arg)
            ? `'${arg}'`
            : arg,
    ),
  ].join(" ");
}

async function main(
  values: ReturnType<typeof commandLine<typeof LOAD_FLAGS>>["values"],
  positionals: string[],
): Promise<void> {
  if (values.compare !== undefined) {
    if (positionals.length !== 1) usageFault("--compare takes two results files: --compare A.json B.json");
    process.stdout.write(compareFiles(values.compare, positionals[0] as string));
    return;
  }
  if (positionals.length > 0) usageFault(`unexpected argument '${positionals[0]}'`);
  let options: ReturnType<typeof loadOptions>;
  try {
    options = loadOptions(values);
  } catch (error) {
    if (error instanceof UsageError) usageFault(error.message);
    throw error;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // Ctrl-C ends the load and finishes the run (rights taken back, results written); twice, at once.
  const stop = new AbortController();
  process.on("SIGINT", () => {
    if (stop.signal.aborted) process.exit(130);
    log(
      "load: interrupted: finishing (answers in flight, rights taken back, results written); Ctrl-C again to quit now",
    );
    stop.abort();
  });
  const result: LoadResult = await runLoad(options, recordedCommand(), log, stop.signal);
  result.thresholds = options.thresholds.map((threshold) =>
    judge(
      threshold,
      threshold.scenario === undefined ? result.overall : result.scenarios[threshold.scenario],
    ),
  );
  const stamp = result.startedAt.replace(/\.\d+Z$/, "Z").replaceAll(":", "-");
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, `load-${stamp}.json`);
  const htmlPath = join(options.outDir, `load-${stamp}.html`);
  writeFileSync(jsonPath, `${JSON.stringify({ ...result, machine: machine() }, null, 2)}\n`);
  writeFileSync(htmlPath, htmlReport(result));

  const caveat = result.target.caveat ? ` (${result.target.caveat})` : "";
  const out: string[] = [`results: ${jsonPath}`, `report: ${htmlPath}`];
  for (const [name, s] of Object.entries(result.scenarios)) {
    const l = s.latencyMs;
    out.push(
      `${name}: ${s.requests} at ${s.ratePerSecond}/s${s.elementsPerSecond !== undefined ? ` (${s.elementsPerSecond} contracts/s)` : ""}, p50 ${l.p50} ms, p99 ${l.p99} ms, p99.9 ${l["p99.9"]} ms, max ${l.max} ms, errors ${s.errors}${Object.keys(s.errorsByCode).length ? ` ${JSON.stringify(s.errorsByCode)}` : ""}${caveat}`,
    );
  }
  for (const verdict of result.thresholds)
    out.push(
      `threshold ${verdict.threshold}: ${verdict.passed ? "passed" : "BREACHED"} (measured ${Number.isNaN(verdict.actual) ? "nothing: no such series" : verdict.actual})`,
    );
  process.stdout.write(`${out.join("\n")}\n`);
  if (result.load.interrupted) {
    process.stderr.write("load: interrupted before the end of its window: exit 130\n");
    process.exitCode = 130;
    return;
  }
  const breached = result.thresholds.filter((verdict) => !verdict.passed);
  if (breached.length > 0) {
    process.stderr.write(
      `load: threshold breached: ${breached.map((v) => `${v.threshold} (measured ${v.actual})`).join(", ")}\n`,
    );
    process.exitCode = 1;
  }
}

if (process.argv[2] === "storm") {
  process.argv.splice(2, 1);
  stormCommand().then(
    (status) => process.exit(status),
    (error: Error) => {
      process.stderr.write(`load storm: ${error.stack ?? error.message}\n`);
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
} else {
  loadCommand();
}
