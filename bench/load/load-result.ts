import type { LoadModel } from "./load-options.js";
import type { IntervalFigures, LatencySummary } from "./recorder.js";
import type { Verdict } from "./thresholds.js";

/**
 * The JSON results file of a load run (`<out>/load-<date>.json`), what the HTML report and
 * `--compare` read. It holds no token: the command line is written with --token-command's value
 * left out.
 */
interface SeriesResult {
  /**
   * Answers (request scenarios), completions, deliveries with a measured lag (updates,
   * completions-stream: one per subscriber and command), or whole snapshot reads (acs-stream).
   */
  requests: number;
  errors: number;
  errorsByCode: Record<string, number>;
  ratePerSecond: number;
  /**
   * From each request's intended send time; for updates and completions-stream, the lag from the
   * command's intended send; for acs-stream, a read's time from opening its socket to its end.
   */
  latencyMs: LatencySummary;
  /** HdrHistogram's compressed base64 form, in microseconds: what `bench merge` adds. */
  histogram: string;
  /**
   * The open model's request scenarios (and overall): arrivals due in the window, those not sent
   * (the in-flight cap), their rate, and the answers of any kind received inside the window per second.
   */
  offered?: number;
  dropped?: number;
  offeredPerSecond?: number;
  achievedPerSecond?: number;
}

export interface TimelinePoint {
  /** Seconds since the end of the warm-up, at the end of the interval. */
  seconds: number;
  scenarios: Record<string, IntervalFigures>;
  /**
   * The load tool's own event-loop delay over the interval: past some ms it sends late and reads
   * answers late, and the figures hold its delay too (run it on a machine of its own, or more of them).
   */
  clientLoopDelayMs: { p99: number; max: number };
}

/** The tool's name in its results; files of before it was one name everywhere say `load`. */
export const TOOL_NAMES = ["ledger-json-gateway bench", "ledger-json-gateway load"] as const;

export interface LoadResult {
  tool: (typeof TOOL_NAMES)[number];
  command: string;
  startedAt: string;
  target: {
    url: string;
    version: string;
    participantId: string;
    embeddedSandbox: boolean;
    /** ledger-json-gateway: streams were renewed in band when the token was. */
    ledgerJsonGateway: boolean;
    caveat?: string;
  };
  load: {
    description: string;
    model: LoadModel;
    durationSeconds: number;
    warmUpSeconds: number;
    intervalSeconds: number;
    scenarios: string[];
    /** Update subscribers (the updates scenario). */
    subscribers: number;
    /** The streams of each stream scenario of the run (updates, completions-stream, acs-stream). */
    streams?: Record<string, number>;
    connections: number;
    /** The prefix of every party and command id the run made. */
    prefix: string;
    /** Stopped early (Ctrl-C, SIGTERM): the figures cover the part of the window it ran. */
    interrupted?: boolean;
    /** Stopped early by --abort-on-fail: the threshold the run so far breached, and when. */
    abortedBy?: { threshold: string; actual: number; atSeconds: number };
    /** The open model's in-flight cap (--max-in-flight). */
    maxInFlight?: number;
    /** The percentiles shown (--percentiles); the summaries hold p50, p90, p95, p99, p99.9 besides. */
    percentiles?: number[];
    /** `bench merge`: the runs merged, one per file (each run's own load is in its file). */
    merged?: { file: string; startedAt: string; prefix: string }[];
  };
  /** Why the run could not keep its offered rate (overload.ts); absent when it could. */
  overloaded?: string;
  /** All request scenarios together (not completions, not updates). */
  overall: Omit<SeriesResult, "errorsByCode">;
  scenarios: Record<
    string,
    SeriesResult & {
      deliveries?: number;
      elements?: number;
      elementsPerSecond?: number;
      /** A workflow's steps (its own figures are whole iterations, from the intended send to the last answer). */
      steps?: Record<string, SeriesResult>;
    }
  >;
  timeline: TimelinePoint[];
  thresholds: Verdict[];
}
