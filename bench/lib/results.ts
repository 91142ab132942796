import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { arch, cpus, platform, release, totalmem } from "node:os";
import { join } from "node:path";
import type { FairnessResult } from "../rig/scenarios/fairness.js";
import type { FanoutPoint, IdleResult, WorkersPoint } from "../rig/scenarios/fanout.js";
import type { RequestCostResult } from "../rig/scenarios/request-cost.js";

/**
 * Bench results: one file per run, `bench/results/gateway-<UTC date>-<commit>.json`, never
 * overwritten, each saying which machine and which commit produced it. docs/performance.md's
 * table is rendered from the newest committed one (`make bench-readme`). `make bench`
 * (`node dist/bench/load.js local`) writes them; bench/rig/run.ts wrote the older ones, in the same shape.
 */
export interface Machine {
  cpus: string;
  memoryGiB: number;
  os: string;
  node: string;
}

export interface Provenance {
  /** The commit the bench ran on; `dirty` when the working tree had uncommitted changes. */
  commit: { id: string; dirty: boolean } | undefined;
  machine: Machine;
}

export function machine(): Machine {
  const cores = cpus();
  return {
    cpus: `${cores.length} x ${cores[0]?.model.trim() ?? "?"}`,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
  };
}

export function provenance(root: string): Provenance {
  return { commit: currentCommit(root), machine: machine() };
}

function currentCommit(root: string): Provenance["commit"] {
  try {
    const id = git(root, ["rev-parse", "HEAD"]);
    const dirty = git(root, ["status", "--porcelain", "--untracked-files=no"]) !== "";
    return { id, dirty };
  } catch {
    return undefined;
  }
}

const git = (root: string, args: string[]) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();

/** `gateway-2026-11-23T09-58-00Z-1a2b3c4.json`: sorts by time, names the commit. */
export function resultFileName(date: Date, commit: Provenance["commit"]): string {
  const stamp = date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
  const id = commit ? `${commit.id.slice(0, 7)}${commit.dirty ? "-dirty" : ""}` : "nocommit";
  return `gateway-${stamp}-${id}.json`;
}

export interface GatewayResultFile {
  path: string;
  result: GatewayResult;
}

/**
 * What `load.js local` writes, and bench/rig/run.ts wrote before it (older files lack `commit` and
 * `machine`, and those of run.ts `tool`, `caveat` and `thresholds`).
 */
export interface GatewayResult {
  /** Tells a comparison's file from a load run's (`--compare` reads both). */
  /** Files written before the tool had one name say `ledger-json-gateway load local`. */
  tool?: typeof LOCAL_TOOL | "ledger-json-gateway load local";
  /** Every figure is against the embedded sandbox: said beside them (issue 26, item 5). */
  caveat?: string;
  date: string;
  node: string;
  cpus: string;
  command: string;
  commit?: Provenance["commit"];
  machine?: Machine;
  /** What else was running on the machine, when the run says so (`--note`). */
  note?: string;
  /** The machine's load average (1, 5, 15 min) at the start and end of the run. */
  loadAverage?: { start: number[]; end: number[] };
  /** Absent when `--scenarios` left the scenario out. */
  updateStream?: UpdateFigures;
  updateStreamBatched?: UpdateFigures;
  submitAndWait?: {
    commands: number;
    concurrency: number;
    directGrpc: CommandFigures;
    gateway: CommandFigures;
    ratioToDirect: { throughput: number };
  };
  fanout?: Omit<NonNullable<Wave2Result["fanout"]>, "points"> & { points: StoredFanoutPoint[] };
  idleConnections?: Wave2Result["idleConnections"];
  workers?: Wave2Result["workers"];
  wsCompression?: Wave2Result["wsCompression"];
  requestCost?: RequestCostResult & { targets?: RequestCostTargets };
  fairness?: FairnessResult;
  /** `--threshold`s' verdicts. */
  thresholds?: { threshold: string; actual: number; passed: boolean }[];
  targets: {
    webSocketVsDirect?: { min: number; met: boolean; metBatched: boolean };
    cpuPerDeliveryAt100?: { maxMicros: number; micros: number; met: boolean };
    oneUpstreamPerDistinctRequest?: { calls: number[]; met: boolean };
    idleConnectionRss?: { maxBytes: number; bytes: number; met: boolean };
    twoWorkersVsOne?: { min: number; ratio: number; met: boolean };
    fairUnderLoad?: { maxP99Ratio: number; minDeliveriesRatio: number; met: boolean };
  };
}

export const LOCAL_TOOL = "ledger-json-gateway bench local";

/** The request-cost scenario's targets, each with its verdict (bench/rig/request-cost.ts). */
type RequestCostTargets = Record<string, { met: boolean }> & {
  listTwinPeakRss?: { timesAnswer?: number | undefined; met: boolean };
};

/** A fan-out point as a results file holds it: runs before the breakdown had `upstreamCalls`. */
type Breakdown = "upstreamStreams" | "handovers" | "admissionProbes" | "catchUps" | "detaches";
export type StoredFanoutPoint = Omit<FanoutPoint, Breakdown> &
  Partial<Pick<FanoutPoint, Breakdown>> & { upstreamCalls?: number };

/** The scenarios of bench v2 (bench/rig/scenarios/fanout.ts), as a results file holds them. */
export interface Wave2Result {
  fanout?: {
    upstreamCallsCountedBy: string;
    gatewayWorkers: number;
    points: FanoutPoint[];
  };
  idleConnections?: IdleResult;
  workers?: { scenario: string; points: WorkersPoint[]; ratio?: number };
  /** Subscribers offering permessage-deflate, websocket-config.compression off and on (N = 1, 100). */
  wsCompression?: { off?: FanoutPoint[]; on?: FanoutPoint[] };
}

interface UpdateFigures {
  eventsPerTransaction: number;
  events: number;
  eventsPerSecond: { directGrpc: number; gatewayWebSocket: number; gatewayHttpList: number };
  ratioToDirect: { gatewayWebSocket: number; gatewayHttpList: number };
  gatewayPeakRssBytes: number;
  gatewayFirstWebSocketRssBytes: number;
}

interface CommandFigures {
  commandsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * The newest gateway result among the files git tracks in bench/results (by its `date`), of
 * those that `has` accepts (a run may leave scenarios out: `--scenarios`).
 */
export function latestCommittedResult(
  root: string,
  has: (result: GatewayResult) => boolean = () => true,
): GatewayResultFile {
  let tracked: Set<string>;
  try {
    tracked = new Set(git(root, ["ls-files", "bench/results"]).split("\n"));
  } catch {
    // Not a git checkout (a source archive): every file there counts as committed.
    tracked = new Set(readdirSync(join(root, "bench", "results")).map((name) => `bench/results/${name}`));
  }
  const files = [...tracked]
    .filter((path) => /^bench\/results\/gateway-.*\.json$/.test(path))
    .map((path) => ({ path, result: JSON.parse(readFileSync(join(root, path), "utf8")) as GatewayResult }))
    .filter((file) => has(file.result))
    .sort((a, b) => Date.parse(b.result.date) - Date.parse(a.result.date));
  const latest = files[0];
  if (!latest) throw new Error("no committed bench/results/gateway-*.json with the scenarios asked for");
  return latest;
}
