import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { projectRoot } from "../../src/proto/project-root.js";
import { commandLine } from "../lib/command-line.js";
import { LOCAL_TOOL, provenance, resultFileName } from "../lib/results.js";
import { SANDBOX_CAVEAT } from "../load/prepare.js";
import { UsageError } from "../load/usage-error.js";
import { localCharts, stormCharts } from "./charts.js";
import { fairness } from "./fairness.js";
import { localFigures } from "./figures.js";
import { localBench } from "./ledger.js";
import { LOCAL_FLAGS, LOCAL_HELP, type LocalOptions, localOptions } from "./options.js";
import { localReport } from "./report.js";
import { requestCost } from "./request-cost.js";
import type { LocalResult } from "./result.js";
import { storm } from "./storm.js";
import { streamsAndCommands } from "./streams.js";
import { printSummary } from "./summary.js";
import { localTargets, workersRatio } from "./targets.js";
import { judgeLocal } from "./thresholds.js";
import { wave2 } from "./wave2.js";
import { workersScaling } from "./workers-scaling.js";

const USAGE_LINE =
  "usage: ledger-json-gateway bench local [--scenario LIST] [--ticks N] [--commands N] ... [--out DIR] [--threshold EXPR ...] (--help lists them)";

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * `load.js local` (`make bench`): the comparison of the gateway against direct gRPC, on the
 * processes it starts (bench/rig/scenarios/* measure, local-*.ts wire them). Reads the flags that
 * follow `local` in process.argv; answers the exit status: 0, 1 a threshold breached, 2 a
 * command line it cannot run (printed with the usage line).
 */
export async function localCommand(): Promise<number> {
  const { values } = commandLine("ledger-json-gateway bench local", LOCAL_FLAGS, undefined, LOCAL_HELP);
  let options: LocalOptions;
  try {
    options = localOptions(values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`load local: ${error.message}\n${USAGE_LINE}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const bench = localBench(options, log);
  const startedAt = new Date();
  const loadAtStart = loadavg().map(round2);
  log(`load local: every figure below is ${SANDBOX_CAVEAT}`);

  const streams = await streamsAndCommands(bench);
  const cost = options.scenarios.has("request-cost") ? await requestCost(bench) : undefined;
  const wave2Result = await wave2(bench);
  const ratio = workersRatio(wave2Result);
  if (wave2Result?.workers && ratio !== undefined) wave2Result.workers.ratio = ratio;
  const fairnessResult = await fairness(bench);
  const scaling = await workersScaling(bench);
  const stormResult = await storm(bench);
  const targets = localTargets(streams, wave2Result, fairnessResult);

  const root = projectRoot();
  const origin = provenance(root);
  // A copied checkout's .git (if it has one) need not be the commit its dist was built from.
  const commit = options.commit === undefined ? origin.commit : { id: options.commit, dirty: false };
  const { machine } = origin;
  const result: LocalResult = {
    tool: LOCAL_TOOL,
    caveat: SANDBOX_CAVEAT,
    date: startedAt.toISOString(),
    node: process.version,
    cpus: machine.cpus,
    commit,
    machine,
    command: recordedCommand(),
    ...(options.note !== undefined && { note: options.note }),
    /** The machine is shared: its load average when the run started and ended. */
    loadAverage: { start: loadAtStart, end: loadavg().map(round2) },
    ...(streams.updates && { updateStream: { eventsPerTransaction: 1, ...streams.updates } }),
    ...(streams.batched && {
      updateStreamBatched: { eventsPerTransaction: options.batch, ...streams.batched },
    }),
    ...(streams.commands && { submitAndWait: streams.commands }),
    ...wave2Result,
    ...(cost && { requestCost: cost }),
    ...(fairnessResult && { fairness: fairnessResult }),
    ...(scaling && { workersScaling: scaling }),
    ...(stormResult && { storm: stormResult }),
    targets,
  };
  const figures = localFigures(result);
  const verdicts = options.thresholds.map((threshold) => judgeLocal(threshold, figures));
  if (verdicts.length > 0) result.thresholds = verdicts;

  const dir = resolve(options.outDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, resultFileName(startedAt, commit));
  // A new file per run ("wx": never overwrite one), so committed results stay what they were.
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`, { flag: "wx" });
  const charts = [
    ...(wave2Result ? localCharts(wave2Result) : []),
    ...(stormResult ? stormCharts(stormResult) : []),
  ];
  const written = [file];
  for (const [name, svg] of charts) {
    const path = file.replace(/\.json$/, `-${name}.svg`);
    writeFileSync(path, svg);
    written.push(path);
  }
  const report = file.replace(/\.json$/, ".html");
  writeFileSync(report, localReport(result, charts));
  written.push(report);

  printSummary({
    batch: options.batch,
    loadAtStart,
    streams,
    requestCost: cost,
    wave2: wave2Result,
    fairness: fairnessResult,
    workersScaling: scaling,
    storm: stormResult,
    targets,
  });
  for (const verdict of verdicts)
    console.log(
      `threshold ${verdict.threshold}: ${verdict.passed ? "passed" : "BREACHED"} (measured ${Number.isNaN(verdict.actual) ? "nothing: no such figure, or a unit that does not fit it" : verdict.actual})`,
    );
  console.log(
    `wrote ${written.map((f) => relative(process.cwd(), f)).join(", ")} (commit ${commit ? commit.id.slice(0, 7) : "?"}${commit?.dirty ? ", uncommitted changes" : ""}); ` +
      "commit the results and charts that a text cites, then `make bench-readme` puts them in docs/performance.md",
  );
  const breached = verdicts.filter((verdict) => !verdict.passed);
  if (breached.length === 0) return 0;
  // A threshold that read nothing names a figure this run does not have: say which it has.
  const unread = breached.some((verdict) => Number.isNaN(verdict.actual));
  process.stderr.write(
    `load local: threshold breached: ${breached.map((v) => `${v.threshold} (measured ${v.actual})`).join(", ")}\n` +
      (unread ? `load local: this run's figures: ${Object.keys(figures).join(", ")}\n` : ""),
  );
  return 1;
}

/** The command line as the results file keeps it, less the note (which it holds as `note`). */
function recordedCommand(): string {
  const args = process.argv
    .slice(2)
    .filter((arg, i, all) => arg !== "--note" && all[i - 1] !== "--note" && !arg.startsWith("--note="))
    .map((arg) => (/[\s'"<>]/.test(arg) ? `'${arg}'` : arg));
  return ["ledger-json-gateway bench local", ...args].join(" ");
}
