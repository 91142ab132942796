import { defaultOutDir } from "./default-out.js";
import type { MixEntry } from "./mix.js";
import { partyChoice } from "./party-options.js";
import { scenarioChoice } from "./scenario-options.js";
import { OPEN_MODEL_METRICS, parseThreshold, percentileOf, type Threshold } from "./thresholds.js";
import type { TokenFrom } from "./token-source.js";
import { UsageError } from "./usage-error.js";
import type { Workflow } from "./workflows/workflow.js";

/**
 * What `node dist/bench/load.js` was asked to do, read and checked from its command line. Every
 * fault is a `UsageError`: load.ts prints it with the usage line and exits 2.
 */

/** Scenarios that send requests, each at its share of the arrival rate. */
export const REQUEST_SCENARIOS = [
  "submit-and-wait",
  "submit-and-wait-for-transaction",
  "submit-and-wait-for-reassignment",
  "submit-async",
  "acs",
  "updates-list",
  "reads",
] as const;
export type RequestScenario = (typeof REQUEST_SCENARIOS)[number];
/**
 * Scenarios that hold streams for the whole run, each with its own count of streams. Not named
 * `completions`: that is submit-async's series (its one completions stream), read by thresholds as such.
 */
const STREAM_SCENARIOS = ["updates", "completions-stream", "acs-stream"] as const;
type StreamScenario = (typeof STREAM_SCENARIOS)[number];
const SCENARIOS: readonly string[] = [...REQUEST_SCENARIOS, ...STREAM_SCENARIOS];
/** The scenarios whose commands a stream scenario's subscribers receive (reads deliver nothing). */
const COMMAND_SCENARIOS: readonly RequestScenario[] = [
  "submit-and-wait",
  "submit-and-wait-for-transaction",
  "submit-async",
];

/** One stage of an open-model run: the rate goes linearly from the previous stage's to `rate`. */
export interface Stage {
  durationMs: number;
  /** Requests per second at the stage's end. */
  rate: number;
}

export type LoadModel =
  | { kind: "open"; stages: Stage[]; startRate: number }
  | { kind: "closed"; concurrency: number };

export interface LoadOptions {
  url: string;
  token: TokenFrom;
  requests: RequestScenario[];
  /** Chains of requests, each iteration one arrival (built-in Iou workflows, --scenario-file's). */
  workflows: Workflow[];
  /** The share of the load of each request scenario and workflow: a weight of the rate, or a rate of its own. */
  mix: MixEntry[];
  /** Existing parties to act as (no admin call); without them the run allocates `prepareParties`. */
  parties?: { party: string; token?: TokenFrom }[];
  prepareParties: number;
  /** WebSocket /v2/updates subscribers (the `updates` scenario); 0 without it. */
  subscribers: number;
  /** WebSocket /v2/commands/completions subscribers (the `completions-stream` scenario); 0 without it. */
  completionSubscribers: number;
  /** WebSocket /v2/state/active-contracts readers, each reading in a loop (`acs-stream`); 0 without it. */
  acsReaders: number;
  model: LoadModel;
  durationMs: number;
  warmUpMs: number;
  intervalMs: number;
  outDir: string;
  thresholds: Threshold[];
  /** HTTP connections kept open to the server (open model: requests past them wait, and that wait counts). */
  connections: number;
  /** Contracts the acs party holds, created before the run (acs, acs-stream and updates-list read them). */
  acsContracts: number;
  /** Contracts the submit-and-wait-for-reassignment scenario moves (one request holds one). */
  reassignmentContracts: number;
  template?: { id: string; createArguments: unknown };
  /** Percentiles the summary, the progress line and the report show (`--percentiles`). */
  percentiles: number[];
  /**
   * Open model: requests in flight at most (k6's maxVUs); an arrival due while that many are out
   * is not sent and counted as dropped.
   */
  maxInFlight: number;
  /** Stop the run at the first interval end where a threshold is breached (abort-on-fail.ts). */
  abortOnFail: boolean;
  /** Serve the live figures for Prometheus on this port (0: any free one) while the run lasts. */
  metricsPort?: number;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `1.5m`, `250ms` in milliseconds. */
function parseDuration(text: string, flag: string): number {
  if (text.trim() === "0") return 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) throw new UsageError(`${flag} takes a duration such as 500ms, 30s, 2m; got '${text}'`);
  return Number(match[1]) * (DURATION_UNITS[match[2] as string] as number);
}

/** `500/s`, `30000/m`, or a bare number of requests per second. */
function parseRate(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(?:\/(s|m))?$/.exec(text.trim());
  const rate = match ? Number(match[1]) / (match[2] === "m" ? 60 : 1) : Number.NaN;
  if (!(rate > 0)) throw new UsageError(`${flag} takes a rate above 0 such as 200/s or 600/m; got '${text}'`);
  return rate;
}

/** `10s:100/s,30s:500/s` */
export function parseStages(text: string): Stage[] {
  return text.split(",").map((part) => {
    const [duration, rate, extra] = part.split(":");
    if (duration === undefined || rate === undefined || extra !== undefined)
      throw new UsageError(`--stages takes DURATION:RATE,... such as 10s:100/s,30s:500/s; got '${part}'`);
    return { durationMs: parseDuration(duration, "--stages"), rate: parseRate(rate, "--stages") };
  });
}

function positiveInteger(text: string, flag: string, min = 1): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min)
    throw new UsageError(`${flag} takes a whole number of at least ${min}; got '${text}'`);
  return value;
}

/**
 * `--subscribers 100` (each stream scenario of the run), or with counts of their own:
 * `100,acs-stream=4` (an ACS reader reads a whole snapshot again and again: some want fewer).
 */
function parseSubscribers(text: string): Record<StreamScenario, number> {
  const counts: Partial<Record<StreamScenario, number>> = {};
  let all: number | undefined;
  for (const part of text.split(",").map((p) => p.trim())) {
    const [name, count, extra] = part.split("=");
    if (count === undefined) {
      if (all !== undefined)
        throw new UsageError(`--subscribers has two counts for every stream scenario: '${text}'`);
      all = positiveInteger(part, "--subscribers");
    } else if (extra === undefined && (STREAM_SCENARIOS as readonly string[]).includes(name as string)) {
      counts[name as StreamScenario] = positiveInteger(count, `--subscribers ${name}=`);
    } else {
      throw new UsageError(
        `--subscribers takes N or N,SCENARIO=N,... (stream scenarios: ${STREAM_SCENARIOS.join(", ")}); got '${part}'`,
      );
    }
  }
  return Object.fromEntries(STREAM_SCENARIOS.map((name) => [name, counts[name] ?? all ?? 10])) as Record<
    StreamScenario,
    number
  >;
}

/** The options as the command line gives them (strings), checked and typed. */
export interface RawOptions {
  url?: string | undefined;
  "token-file"?: string | undefined;
  "token-command"?: string | undefined;
  scenario?: string | undefined;
  mix?: string | undefined;
  "scenario-file"?: string | undefined;
  party?: string[] | undefined;
  "party-token-command"?: string | undefined;
  "prepare-parties"?: string | undefined;
  rate?: string | undefined;
  stages?: string | undefined;
  concurrency?: string | undefined;
  subscribers: string;
  duration: string;
  "warm-up": string;
  interval: string;
  out?: string | undefined;
  threshold?: string[] | undefined;
  connections: string;
  "acs-contracts": string;
  "reassignment-contracts": string;
  template?: string | undefined;
  "create-arguments"?: string | undefined;
  percentiles?: string | undefined;
  "max-in-flight"?: string | undefined;
  "abort-on-fail"?: boolean | undefined;
  "metrics-port"?: string | undefined;
}

/** `p50,p95,p99.9` as numbers, each above 0 and at most 100. */
export function parsePercentiles(text: string): number[] {
  return text.split(",").map((part) => {
    const p = percentileOf(part.trim());
    if (p === undefined || !(p > 0 && p <= 100))
      throw new UsageError(`--percentiles takes pNN or pNN.N names such as p50,p95,p99.9; got '${part}'`);
    return p;
  });
}

export function loadOptions(raw: RawOptions): LoadOptions {
  if (raw.url === undefined) throw new UsageError("--url is required (the JSON Ledger API server to load)");
  let url: URL;
  try {
    url = new URL(raw.url);
  } catch {
    throw new UsageError(`--url takes an http(s) URL such as http://127.0.0.1:7575; got '${raw.url}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--url takes an http(s) URL; got '${raw.url}'`);
  const parties = partyChoice(raw);
  const { names, workflows, mix } = scenarioChoice(raw, SCENARIOS, STREAM_SCENARIOS, parseRate);
  const requests = REQUEST_SCENARIOS.filter((name) => names.includes(name));
  // Read only for a run that holds streams, as --subscribers was before there were several.
  const counts = names.some((name) => (STREAM_SCENARIOS as readonly string[]).includes(name))
    ? parseSubscribers(raw.subscribers)
    : undefined;
  const streamCount = (name: StreamScenario) => (counts && names.includes(name) ? counts[name] : 0);
  const subscribers = streamCount("updates");
  const completionSubscribers = streamCount("completions-stream");
  const acsReaders = streamCount("acs-stream");
  // acs-stream reads what the preparation made: it loads the server without any requests.
  if (requests.length === 0 && workflows.length === 0 && names.some((name) => name !== "acs-stream"))
    throw new UsageError("--scenario needs a request scenario (updates alone has no commands to deliver)");
  // The lag trackers follow the built-in scenarios' commands; a workflow's are not registered.
  if (subscribers > 0 && workflows.length > 0 && !requests.some((name) => COMMAND_SCENARIOS.includes(name)))
    throw new UsageError(
      `updates measures the lag of the commands of ${COMMAND_SCENARIOS.join(", ")} (one is needed beside workflows, whose commands it does not follow)`,
    );
  if (completionSubscribers > 0 && !requests.some((name) => COMMAND_SCENARIOS.includes(name)))
    throw new UsageError(
      `completions-stream needs a command scenario to deliver completions of (${COMMAND_SCENARIOS.join(", ")})`,
    );

  const given = [raw.rate, raw.stages, raw.concurrency].filter((value) => value !== undefined).length;
  if (given > 1) throw new UsageError("give one of --rate, --stages or --concurrency");
  let model: LoadModel;
  let durationMs = parseDuration(raw.duration, "--duration");
  if (raw.concurrency !== undefined) {
    model = { kind: "closed", concurrency: positiveInteger(raw.concurrency, "--concurrency") };
  } else if (raw.stages !== undefined) {
    const stages = parseStages(raw.stages);
    model = { kind: "open", stages, startRate: 0 };
    durationMs = stages.reduce((sum, stage) => sum + stage.durationMs, 0);
  } else {
    const rate = parseRate(raw.rate ?? "100/s", "--rate");
    model = { kind: "open", stages: [{ durationMs, rate }], startRate: rate };
  }
  if (durationMs <= 0) throw new UsageError("--duration must be above 0");
  const ownRate = mix.find((entry) => "ratePerSecond" in entry);
  if (ownRate && model.kind === "closed")
    throw new UsageError(
      `${ownRate.name} has a rate of its own: that is the open model's (not with --concurrency)`,
    );

  let template: LoadOptions["template"];
  if (raw.template !== undefined) {
    if (raw["create-arguments"] === undefined)
      throw new UsageError(
        '--template needs --create-arguments JSON (the string "$party" stands for the run\'s party)',
      );
    try {
      template = { id: raw.template, createArguments: JSON.parse(raw["create-arguments"]) };
    } catch (error) {
      throw new UsageError(`--create-arguments is not JSON: ${(error as Error).message}`);
    }
  } else if (raw["create-arguments"] !== undefined) {
    throw new UsageError("--create-arguments goes with --template");
  }

  const thresholds = (raw.threshold ?? []).map(parseThreshold);
  const series = [
    ...requests,
    ...workflows.map((workflow) => workflow.name),
    ...(requests.includes("submit-async") ? ["completions"] : []),
    ...STREAM_SCENARIOS.filter((name) => streamCount(name) > 0),
  ];
  for (const threshold of thresholds) {
    if (threshold.scenario !== undefined && !series.includes(threshold.scenario))
      throw new UsageError(
        `--threshold '${threshold.text}' reads ${threshold.scenario}, which this run does not have (it has ${series.join(", ")})`,
      );
    if (OPEN_MODEL_METRICS.includes(threshold.metric) && model.kind !== "open")
      throw new UsageError(
        `--threshold '${threshold.text}': ${threshold.metric} is the open model's (--rate or --stages): the closed model offers no rate`,
      );
    if (
      OPEN_MODEL_METRICS.includes(threshold.metric) &&
      threshold.scenario !== undefined &&
      !(requests as readonly string[]).includes(threshold.scenario)
    )
      throw new UsageError(
        `--threshold '${threshold.text}': ${threshold.metric} is a request scenario's (${requests.join(", ")}), not ${threshold.scenario}'s`,
      );
  }
  const metricsPort =
    raw["metrics-port"] === undefined ? undefined : positiveInteger(raw["metrics-port"], "--metrics-port", 0);
  if (metricsPort !== undefined && metricsPort > 65535)
    throw new UsageError(`--metrics-port takes a port (0 for any free one); got '${raw["metrics-port"]}'`);

  return {
    url: url.toString().replace(/\/$/, ""),
    token: parties.token,
    ...(parties.parties && { parties: parties.parties }),
    prepareParties: parties.prepareParties,
    requests,
    workflows,
    mix,
    subscribers,
    completionSubscribers,
    acsReaders,
    model,
    durationMs,
    warmUpMs: parseDuration(raw["warm-up"], "--warm-up"),
    intervalMs: parseDuration(raw.interval, "--interval"),
    outDir: raw.out ?? defaultOutDir(),
    thresholds,
    connections: positiveInteger(raw.connections, "--connections"),
    acsContracts: positiveInteger(raw["acs-contracts"], "--acs-contracts"),
    reassignmentContracts: positiveInteger(raw["reassignment-contracts"], "--reassignment-contracts"),
    ...(template && { template }),
    percentiles: parsePercentiles(raw.percentiles ?? "p50,p95,p99,p99.9"),
    maxInFlight: positiveInteger(raw["max-in-flight"] ?? "1000", "--max-in-flight"),
    abortOnFail: raw["abort-on-fail"] === true,
    ...(metricsPort !== undefined && { metricsPort }),
  };
}
