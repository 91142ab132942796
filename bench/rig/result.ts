import type { GatewayResult } from "../lib/results.js";
import type { StormPoint } from "./scenarios/storm.js";

/**
 * What `load.js local` writes: the shape it shares with the files of bench/rig/run.ts
 * (bench/lib/results.ts), and the workers-scaling scenario's (local-workers-scaling.ts), which
 * only it writes. A module of types alone, so that the figures and the report read them without
 * importing the scenarios that measure them.
 */
export interface CpuPlan {
  gateway?: string;
  sandbox?: string;
  clients?: string;
  /** Why these lists (or none): the results say how the processes shared the machine. */
  why: string;
}

export interface WorkersScalingPoint {
  workers: number | "default";
  /** Worker threads the gateway started with (its own choice for `default`). */
  threads: number;
  seconds: number;
  /** streams: transactions (WebSocket frames); submit: commands. */
  perSecond: number;
  failures: number;
  /** CPU over the window, in cores (CPU seconds per second). */
  cores: { gateway: number; sandbox: number; clients: number };
  /** Gateway CPU per transaction or per command. */
  gatewayCpuMicrosPer: number;
  /** perSecond / the first 1-worker point's. */
  ratio?: number;
}

interface WorkersScalingLoad {
  unit: string;
  concurrency: number;
  points: WorkersScalingPoint[];
}

/**
 * As the standalone tool before it wrote `bench/results/workers-scaling-*.json`, less what the
 * results file holds once (date, command, commit, machine, load average).
 */
export interface WorkersScalingResult {
  cpus: CpuPlan;
  seconds: number;
  warmUpSeconds: number;
  clients: number;
  ticks: number;
  batch: number;
  results: Partial<Record<"streams" | "submit", WorkersScalingLoad>>;
}

/** What the storm scenario writes: its shape once, then a point per crowd. */
export interface StormResult {
  scenario: string;
  /** Ledger transactions before the storm (each subscriber's first element is the first). */
  preloaded: number;
  establishedSubscribers: number;
  tickEveryMs: number;
  /** The crowd's client process's niceness (absent in results before it was set: 0). */
  crowdNice?: number;
  points: StormPoint[];
}

/** What `load.js local` writes: the shared shape, and this scenario's, which only it writes. */
export type LocalResult = GatewayResult & { workersScaling?: WorkersScalingResult; storm?: StormResult };
