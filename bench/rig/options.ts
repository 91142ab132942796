import { UsageError } from "../load/usage-error.js";
import { type LocalThreshold, parseLocalThreshold } from "./thresholds.js";

/**
 * What `node dist/bench/load.js local` (`make bench`) was asked to do: the gateway against direct
 * gRPC on sandboxes and gateways it starts itself. The flags are the comparison's own sizes, not
 * the load model of a run against a URL: its scenarios measure ratios and costs on a preloaded
 * ledger, each with its own fixed shape (bench/rig/scenarios/*). Every fault is a `UsageError`.
 */

const LOCAL_SCENARIOS = [
  "update-stream",
  "submit-and-wait",
  "fanout",
  "idle",
  "workers",
  "request-cost",
  "ws-compression",
  "fairness",
  "workers-scaling",
  "storm",
] as const;
type LocalScenario = (typeof LOCAL_SCENARIOS)[number];

/** The flag table: commandLine writes the usage line, with these defaults, from it. */
export const LOCAL_FLAGS = {
  scenario: { type: "string", default: "update-stream,submit-and-wait,fanout,idle,workers" },
  ticks: { type: "string", default: "100000" },
  payload: { type: "string", default: "64" },
  runs: { type: "string", default: "3" },
  commands: { type: "string", default: "2000" },
  concurrency: { type: "string", default: "16" },
  batch: { type: "string", default: "10" },
  "warm-up": { type: "string", default: "4000" },
  "fanout-ticks": { type: "string", default: "20000" },
  subscribers: { type: "string", default: "1,10,100,1000" },
  deliveries: { type: "string", default: "200000" },
  "fanout-sockets-per-client": { type: "string", default: "2500" },
  "fanout-replay": { type: "string", default: "off" },
  "idle-connections": { type: "string", default: "10000" },
  "workers-seconds": { type: "string", default: "10" },
  "workers-ticks": { type: "string", default: "20000" },
  "workers-batch": { type: "string", default: "10" },
  "workers-concurrency": { type: "string", default: "16" },
  "fairness-seconds": { type: "string", default: "10" },
  "fairness-rounds": { type: "string", default: "1" },
  "fairness-victim-concurrency": { type: "string", default: "2" },
  "fairness-victim-rate": { type: "string", default: "100" },
  "flood-concurrency": { type: "string", default: "64" },
  "flood-sockets": { type: "string", default: "16" },
  "flood-nice": { type: "string", default: "0" },
  "fairness-caps": { type: "string", default: "on,off" },
  "scaling-workers": { type: "string", default: "1,2,4,8,default" },
  "scaling-scenarios": { type: "string", default: "streams,submit" },
  "scaling-seconds": { type: "string", default: "10" },
  "scaling-warm-up-seconds": { type: "string", default: "5" },
  "scaling-clients": { type: "string", default: "4" },
  "scaling-stream-concurrency": { type: "string", default: "64" },
  "scaling-submit-concurrency": { type: "string", default: "64" },
  "scaling-ticks": { type: "string", default: "20000" },
  "scaling-batch": { type: "string", default: "10" },
  "storm-subscribers": { type: "string", default: "1000,10000" },
  "storm-crowds": { type: "string", default: "1x1,100x1,1x4" },
  "storm-established": { type: "string", default: "100" },
  "storm-tick-ms": { type: "string", default: "20" },
  "storm-upgrades-per-second": { type: "string" },
  "storm-crowd-nice": { type: "string", default: "10" },
  "gateway-cpus": { type: "string" },
  "sandbox-cpus": { type: "string" },
  "client-cpus": { type: "string" },
  out: { type: "string", default: "bench/results" },
  threshold: { type: "string", multiple: true },
  note: { type: "string" },
  "gateway-cpu-prof": { type: "string" },
  commit: { type: "string" },
} as const;

export const LOCAL_HELP = `The gateway against direct gRPC (make bench), on a sandbox, gateways and clients it starts
itself, each a process of its own; every figure is against the embedded sandbox. Writes
OUT/gateway-<UTC time>-<commit>.json (what make bench-readme renders docs/performance.md from),
an HTML report beside it, and SVG charts of the fan-out, idle and workers scenarios.

  --scenario LIST         ${LOCAL_SCENARIOS.slice(0, 5).join(", ")},
                          ${LOCAL_SCENARIOS.slice(5).join(", ")}
                          (ws-compression, request-cost, fairness, workers-scaling and storm run only when named)
  update-stream           the update stream [0, end] over direct gRPC, the WebSocket and the list twin,
                          --ticks of --payload B, 1 and --batch events per transaction, --runs each
  submit-and-wait         --commands at --concurrency, direct gRPC vs the gateway, after --warm-up commands
  fanout                  --subscribers N identical WebSocket subscribers (about --deliveries in all, 200
                          elements each at least) on a sandbox of --fanout-ticks, over a client process per
                          --fanout-sockets-per-client; --fanout-replay on: each reads the ledger from offset 0
  idle                    --idle-connections idle WebSockets: the gateway's RSS per connection
  workers                 1 and 2 gateway workers under --workers-concurrency stream loops for --workers-seconds
  request-cost            the gateway's CPU per request and per streamed element, one gateway per kind
  ws-compression          subscribers offering permessage-deflate, websocket-config.compression off and on
  fairness                one user's flood against another's paced load, caps --fairness-caps on,off
  workers-scaling         a fresh gateway per --scaling-workers count (\`default\`: server.workers left out,
                          the gateway's own choice) against one load, --scaling-scenarios streams,submit:
                          streams: bounded WebSocket /v2/updates of a sandbox of --scaling-ticks of --payload B
                          in transactions of --scaling-batch, read to the end again and again from
                          --scaling-stream-concurrency loops; submit: submit-and-wait of one tick from
                          --scaling-submit-concurrency loops; the loops spread over --scaling-clients
                          processes; each point warmed --scaling-warm-up-seconds, measured --scaling-seconds;
                          figures workers-scaling.streams.w2-vs-1, ...streams.rate-w4,
                          ...submit.cpu-per-command-w1 (µs; streams: cpu-per-transaction-wW), ...gateway-cores-wW
  storm                   a reconnect storm: --storm-subscribers N WebSockets open /v2/updates from offset 0 at
                          once, per crowd of --storm-crowds KxQ (K tokens, Q queries, up to 4), against a
                          fresh one-worker gateway (--storm-upgrades-per-second sets its
                          websocket-config.upgrades-per-second) while --storm-established subscribers
                          stream a tick every --storm-tick-ms; after each storm the same crowd against bare
                          uWebSockets.js answering with the gateway's frames (bench/lib/bare-storm-server.ts);
                          figures storm.n1000-k1-q1.cpu-per-start (µs), ...bare-cpu-per-start (µs),
                          ...times-bare (x), ...calls-per-start, ...first-all (s), ...established-p99 (ms); the crowd's process runs
                          at --storm-crowd-nice (a crowd's clients are other machines: its CPU here should not
                          delay the established subscribers' process on the same cores; 0 to share them evenly)
  --gateway-cpus LIST     workers-scaling: taskset CPU lists; by default, on 12 cores or more, the gateway
  --sandbox-cpus LIST     gets the first 8 (fewer below 14 cores), the sandbox the next 2, the clients
  --client-cpus LIST      the rest; on fewer cores nothing is pinned (the results say so)
  --out DIR               where the results, the report and the charts go
  --threshold EXPR        SCENARIO.FIGURE OP VALUE, several allowed, e.g. 'fanout.cpu-per-delivery<1.5us',
                          'update-stream.ws-vs-direct>=0.8', 'submit-and-wait.p99<40ms', 'idle.rss-per-connection<16KiB';
                          the results' figures are listed in the report and by --compare; one breached: exit 1
  --note TEXT             what else ran on the machine, kept in the results
  --gateway-cpu-prof DIR  every gateway runs under node --cpu-prof, one .cpuprofile each in DIR
  --commit ID             the commit measured (whose dist/ ran), recorded and in the file name instead of
                          what the tree's .git says: for a copied checkout whose dist was built elsewhere

Targets (the ratios and costs the gateway aims at) are printed and written, never the exit status:
a threshold is what fails a run. Exit status: 0, 1 (a threshold breached, or the run failed),
2 (a command line it cannot run).`;

export interface LocalOptions {
  scenarios: ReadonlySet<LocalScenario>;
  ticks: number;
  payloadBytes: number;
  runs: number;
  commands: number;
  concurrency: number;
  batch: number;
  /** Commands (or requests) each measured gateway answers before its window. */
  warmUp: number;
  fanoutTicks: number;
  subscribers: number[];
  deliveries: number;
  /** Subscribers one bench client process takes; more subscribers, more client processes. */
  fanoutSocketsPerClient: number;
  fanoutReplay: boolean;
  idleConnections: number;
  workersSeconds: number;
  workersTicks: number;
  workersBatch: number;
  workersConcurrency: number;
  fairnessSeconds: number;
  fairnessRounds: number;
  fairnessVictimConcurrency: number;
  fairnessVictimRate: number;
  floodConcurrency: number;
  floodSockets: number;
  floodNice: number;
  fairnessCaps: ("on" | "off")[];
  workersScaling: WorkersScalingOptions;
  stormSubscribers: number[];
  /** Each crowd's distinct tokens and queries. */
  stormCrowds: { tokens: number; queries: number }[];
  stormEstablished: number;
  stormTickMs: number;
  /** Given: the gateways run with websocket-config.upgrades-per-second set to it. */
  stormUpgradesPerSecond?: number;
  /** The niceness of the crowd's client process. */
  stormCrowdNice: number;
  outDir: string;
  thresholds: LocalThreshold[];
  note?: string;
  gatewayCpuProf?: string;
  /** `--commit`: recorded instead of the tree's HEAD (a copied checkout need not have it). */
  commit?: string;
}

/** The workers-scaling scenario's own sizes (its flags are `--scaling-*` and the CPU lists). */
export interface WorkersScalingOptions {
  /** Worker counts, one gateway each; `default` leaves server.workers out. */
  workers: (number | "default")[];
  loads: ("streams" | "submit")[];
  seconds: number;
  warmUpSeconds: number;
  clients: number;
  streamConcurrency: number;
  submitConcurrency: number;
  ticks: number;
  batch: number;
  /** `taskset -c` CPU lists as given; none given: planned from the machine's cores. */
  cpus: { gateway?: string; sandbox?: string; clients?: string };
}

type Raw = {
  [K in keyof typeof LOCAL_FLAGS]: (typeof LOCAL_FLAGS)[K] extends { multiple: true }
    ? string[] | undefined
    : (typeof LOCAL_FLAGS)[K] extends { default: string }
      ? string
      : string | undefined;
};

function integer(text: string, flag: string, min: number): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isInteger(value) || value < min)
    throw new UsageError(`${flag} takes a whole number of at least ${min}; got '${text}'`);
  return value;
}

const list = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

export function localOptions(raw: Raw): LocalOptions {
  const names = list(raw.scenario);
  for (const name of names)
    if (!(LOCAL_SCENARIOS as readonly string[]).includes(name))
      throw new UsageError(`unknown scenario ${name}; known: ${LOCAL_SCENARIOS.join(", ")}`);
  if (names.length === 0) throw new UsageError("--scenario names none");
  const scenarios = new Set(names as LocalScenario[]);
  const fairnessCaps = list(raw["fairness-caps"]);
  if (fairnessCaps.length === 0 || fairnessCaps.some((mode) => mode !== "on" && mode !== "off"))
    throw new UsageError(`--fairness-caps takes on, off or both (on,off), not ${raw["fairness-caps"]}`);
  if (raw["fanout-replay"] !== "on" && raw["fanout-replay"] !== "off")
    throw new UsageError(`--fanout-replay takes on or off, not ${raw["fanout-replay"]}`);
  const thresholds = (raw.threshold ?? []).map(parseLocalThreshold);
  for (const threshold of thresholds)
    if (!scenarios.has(threshold.scenario as LocalScenario))
      throw new UsageError(
        `--threshold '${threshold.text}' reads ${threshold.scenario}, which this run does not have (it has ${names.join(", ")})`,
      );
  return {
    scenarios,
    ticks: integer(raw.ticks, "--ticks", 1),
    payloadBytes: integer(raw.payload, "--payload", 1),
    runs: integer(raw.runs, "--runs", 1),
    commands: integer(raw.commands, "--commands", 1),
    concurrency: integer(raw.concurrency, "--concurrency", 1),
    batch: integer(raw.batch, "--batch", 1),
    warmUp: integer(raw["warm-up"], "--warm-up", 0),
    fanoutTicks: integer(raw["fanout-ticks"], "--fanout-ticks", 1),
    subscribers: list(raw.subscribers).map((n) => integer(n, "--subscribers", 1)),
    deliveries: integer(raw.deliveries, "--deliveries", 1),
    fanoutSocketsPerClient: integer(raw["fanout-sockets-per-client"], "--fanout-sockets-per-client", 1),
    fanoutReplay: raw["fanout-replay"] === "on",
    idleConnections: integer(raw["idle-connections"], "--idle-connections", 1),
    workersSeconds: integer(raw["workers-seconds"], "--workers-seconds", 1),
    workersTicks: integer(raw["workers-ticks"], "--workers-ticks", 1),
    workersBatch: integer(raw["workers-batch"], "--workers-batch", 1),
    workersConcurrency: integer(raw["workers-concurrency"], "--workers-concurrency", 1),
    fairnessSeconds: integer(raw["fairness-seconds"], "--fairness-seconds", 1),
    fairnessRounds: integer(raw["fairness-rounds"], "--fairness-rounds", 1),
    fairnessVictimConcurrency: integer(
      raw["fairness-victim-concurrency"],
      "--fairness-victim-concurrency",
      1,
    ),
    fairnessVictimRate: integer(raw["fairness-victim-rate"], "--fairness-victim-rate", 1),
    floodConcurrency: integer(raw["flood-concurrency"], "--flood-concurrency", 1),
    floodSockets: integer(raw["flood-sockets"], "--flood-sockets", 0),
    floodNice: integer(raw["flood-nice"], "--flood-nice", -20),
    fairnessCaps: fairnessCaps as ("on" | "off")[],
    workersScaling: workersScalingOptions(raw),
    stormSubscribers: list(raw["storm-subscribers"]).map((n) => integer(n, "--storm-subscribers", 1)),
    stormCrowds: list(raw["storm-crowds"]).map(stormCrowd),
    stormEstablished: integer(raw["storm-established"], "--storm-established", 1),
    stormTickMs: integer(raw["storm-tick-ms"], "--storm-tick-ms", 1),
    stormCrowdNice: integer(raw["storm-crowd-nice"], "--storm-crowd-nice", 0),
    ...(raw["storm-upgrades-per-second"] !== undefined && {
      stormUpgradesPerSecond: integer(raw["storm-upgrades-per-second"], "--storm-upgrades-per-second", 0),
    }),
    outDir: raw.out,
    thresholds,
    ...(raw.note !== undefined && { note: raw.note }),
    ...(raw["gateway-cpu-prof"] !== undefined && { gatewayCpuProf: raw["gateway-cpu-prof"] }),
    ...(raw.commit !== undefined && { commit: commitId(raw.commit) }),
  };
}

// `KxQ`: K tokens, Q queries.
function stormCrowd(text: string): { tokens: number; queries: number } {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (match === null) throw new UsageError(`--storm-crowds takes KxQ items such as 100x1, not '${text}'`);
  return {
    tokens: integer(match[1] as string, "--storm-crowds", 1),
    queries: integer(match[2] as string, "--storm-crowds", 1),
  };
}

// The id goes into the results' file name: a word, as `git rev-parse` or a hand-made name writes it.
function commitId(text: string): string {
  if (!/^[\w.-]+$/.test(text))
    throw new UsageError(`--commit takes a commit id such as d62f3b9, not '${text}'`);
  return text;
}

// taskset -c's lists: `0-7`, `8,9`, `10-15`.
function cpuList(text: string | undefined, flag: string): string | undefined {
  if (text !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(text))
    throw new UsageError(`${flag} takes a taskset CPU list such as 0-7 or 8,9; got '${text}'`);
  return text;
}

function workersScalingOptions(raw: Raw): WorkersScalingOptions {
  const workers = list(raw["scaling-workers"]).map((w) =>
    w === "default" ? ("default" as const) : integer(w, "--scaling-workers", 1),
  );
  if (workers.length === 0) throw new UsageError("--scaling-workers names none");
  const loads = list(raw["scaling-scenarios"]);
  if (loads.length === 0 || loads.some((load) => load !== "streams" && load !== "submit"))
    throw new UsageError(
      `--scaling-scenarios takes streams, submit or both, not ${raw["scaling-scenarios"]}`,
    );
  const gateway = cpuList(raw["gateway-cpus"], "--gateway-cpus");
  const sandbox = cpuList(raw["sandbox-cpus"], "--sandbox-cpus");
  const clients = cpuList(raw["client-cpus"], "--client-cpus");
  return {
    workers,
    loads: loads as ("streams" | "submit")[],
    seconds: integer(raw["scaling-seconds"], "--scaling-seconds", 1),
    warmUpSeconds: integer(raw["scaling-warm-up-seconds"], "--scaling-warm-up-seconds", 0),
    clients: integer(raw["scaling-clients"], "--scaling-clients", 1),
    streamConcurrency: integer(raw["scaling-stream-concurrency"], "--scaling-stream-concurrency", 1),
    submitConcurrency: integer(raw["scaling-submit-concurrency"], "--scaling-submit-concurrency", 1),
    ticks: integer(raw["scaling-ticks"], "--scaling-ticks", 1),
    batch: integer(raw["scaling-batch"], "--scaling-batch", 1),
    cpus: {
      ...(gateway !== undefined && { gateway }),
      ...(sandbox !== undefined && { sandbox }),
      ...(clients !== undefined && { clients }),
    },
  };
}
