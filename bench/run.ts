/**
 * `make bench`: the gateway against direct gRPC on the same preloaded sandbox, in one run.
 *   node dist/bench/run.js [--ticks 100000] [--payload 64] [--runs 3] [--commands 2000]
 *                          [--concurrency 16] [--batch 10] [--warm-up 4000]
 *                          [--scenarios update-stream,submit-and-wait,fanout,idle,workers,request-cost,ws-compression]
 *                          [--fanout-ticks 20000] [--subscribers 1,10,100,1000] [--deliveries 200000]
 *                          [--fanout-replay off]
 *                          [--idle-connections 10000] [--workers-seconds 10] [--workers-ticks 20000]
 *                          [--workers-batch 10] [--workers-concurrency 16] [--note TEXT]
 *                          [--gateway-cpu-prof DIR] [--fairness-seconds 10] [--fairness-rounds 1]
 *                          [--fairness-victim-concurrency 2] [--fairness-victim-rate 100]
 *                          [--flood-concurrency 64] [--flood-sockets 16] [--flood-nice 0]
 *                          [--fairness-caps on,off]
 * `--scenarios` picks some, for a short run (`make bench ARGS="--scenarios fanout"`). The wave-2
 * ones (fanout, idle, workers; ws-compression, not run unless named: the fan-out's subscribers
 * offering permessage-deflate at N = 1 and 100, against websocket-config.compression off and on)
 * run their clients in a separate process (bench/bench-client.ts)
 * (`--fanout-replay on`: each fan-out point's N subscribers read the whole preloaded ledger from
 * offset 0, sent together, whatever `--deliveries` says: issue 23's replay crowd, e.g.
 * `--fanout-ticks 5000 --subscribers 100 --fanout-replay on`)
 * and read the gateway's CPU and resident memory from /proc; they write SVG charts beside the
 * results file. Their targets are printed, never asserted in tests. `--gateway-cpu-prof DIR`
 * runs every gateway under `node --cpu-prof`, one .cpuprofile per gateway in DIR.
 * fairness (issue 24, not run unless named): one user's flood (a process of its own) against
 * another user's paced submit-and-wait and update stream, on a gateway with per-user caps and,
 * for comparison, one without (`--fairness-caps`); bench/scenarios/fairness.ts says what and why.
 * request-cost (issue 10) runs the update streams (1 and `--batch` events per transaction) and
 * submit-and-wait as above, plus submit-and-wait-for-transaction and GET /v2/state/ledger-end,
 * reading the gateway's CPU from /proc over each measured window: its CPU per request and per
 * streamed element, and its peak RSS while it answers the whole range as one list twin, and the
 * list twin streamed as NDJSON (its rate against direct gRPC, its first element's delay). There
 * each measured kind has a gateway of its own (bench/scenarios/request-cost.ts says why).
 * submit-and-wait's gateway (in both scenarios) answers `--warm-up` commands before its window,
 * as request-cost's other unary gateways do.
 * Prints its progress (each phase, each run of each transport, each quarter of the commands)
 * and writes a new bench/results/gateway-<date>-<commit>.json per run, with the machine and the
 * commit (`make bench-readme` then renders docs/performance.md's table from the newest committed one). Target (checked here, never in
 * tests): the WebSocket update stream delivers at least 80% of the direct gRPC rate.
 * The update stream is measured twice: one event per transaction (the worst case: every event
 * pays a message's overhead) and `--batch` events per transaction.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import { mintToken } from "../src/jwt/mint-token.js";
import { projectRoot } from "../src/proto/project-root.js";
import { commandLine } from "./lib/command-line.js";
import {
  type RunningSandbox,
  startBenchClient,
  startGatewayProcess,
  startSandboxProcess,
} from "./lib/processes.js";
import { provenance, resultFileName, type Wave2Result } from "./lib/results.js";
import { barChartSvg } from "./lib/svg-chart.js";
import {
  allocateParty,
  capArgs,
  FAIRNESS_CAPS,
  FAIRNESS_TARGET,
  type FairnessResult,
  type FairnessRun,
  fairnessRun,
} from "./scenarios/fairness.js";
import {
  type FanoutPoint,
  fanoutPoint,
  type GatewayUnderTest,
  idleConnections,
  streamLoad,
  UPSTREAM_CALLS_SOURCE,
  updatesRequest,
  type WorkersPoint,
} from "./scenarios/fanout.js";
import {
  ledgerEndCost,
  type RequestCostResult,
  submitAndWaitForTransactionCost,
} from "./scenarios/request-cost.js";
import { submitAndWait } from "./scenarios/submit-and-wait.js";
import { type GatewayProcess, type UpdateStreamResult, updateStream } from "./scenarios/update-stream.js";

const WS_TARGET = 0.8;

const { values } = commandLine("run.js", {
  ticks: { type: "string", default: "100000" },
  payload: { type: "string", default: "64" },
  runs: { type: "string", default: "3" },
  commands: { type: "string", default: "2000" },
  concurrency: { type: "string", default: "16" },
  batch: { type: "string", default: "10" },
  "warm-up": { type: "string", default: "4000" },
  scenarios: { type: "string", default: "update-stream,submit-and-wait,fanout,idle,workers" },
  "fanout-ticks": { type: "string", default: "20000" },
  subscribers: { type: "string", default: "1,10,100,1000" },
  deliveries: { type: "string", default: "200000" },
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
  note: { type: "string" },
  "gateway-cpu-prof": { type: "string" },
});
const SCENARIOS = [
  "update-stream",
  "submit-and-wait",
  "fanout",
  "idle",
  "workers",
  "request-cost",
  "ws-compression",
  "fairness",
] as const;
const picked = new Set(values.scenarios.split(",").map((name) => name.trim()));
for (const name of picked) {
  if (!(SCENARIOS as readonly string[]).includes(name)) {
    console.error(`unknown scenario ${name}; known: ${SCENARIOS.join(", ")}`);
    process.exit(2);
  }
}
const runs = (name: (typeof SCENARIOS)[number]) => picked.has(name);
const fairnessModes = values["fairness-caps"].split(",").map((mode) => mode.trim());
if (fairnessModes.some((mode) => mode !== "on" && mode !== "off")) {
  console.error(`--fairness-caps takes on, off or both (on,off), not ${values["fairness-caps"]}`);
  process.exit(2);
}
const ticks = Number(values.ticks);
const payloadBytes = Number(values.payload);
const warmUp = Number(values["warm-up"]);
const startedAt = new Date();
const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
/** The command line, less the note (which the results file holds as `note`). */
const commandArgs = process.argv
  .slice(2)
  .filter((arg, i, all) => arg !== "--note" && all[i - 1] !== "--note" && !arg.startsWith("--note="))
  .join(" ");
const origin = process.hrtime.bigint();
/** One progress line, with the time since the start: the bench takes minutes. */
const progress = (phase: string) => (line: string) => {
  const seconds = Number(process.hrtime.bigint() - origin) / 1e9;
  console.log(`[${seconds.toFixed(1).padStart(6)} s] ${phase}: ${line}`);
};

/** `--gateway-cpu-prof DIR`: every gateway runs under `node --cpu-prof`. */
const cpuProfArgs =
  values["gateway-cpu-prof"] === undefined
    ? []
    : ["--cpu-prof", "--cpu-prof-dir", values["gateway-cpu-prof"]];

/**
 * A preloaded sandbox, and the token of its ticks' owner (`actAs-<party>`: the unsecured sandbox
 * checks rights, not signatures).
 */
interface Ledger {
  sandbox: RunningSandbox;
  token: string;
}

/** A preloaded sandbox for the length of `body`, which starts the gateways it measures in front of it. */
async function withSandbox<T>(perTransaction: number, body: (ledger: Ledger) => Promise<T>): Promise<T> {
  const say = progress(`set-up ${perTransaction}/tx`);
  say(`starting the sandbox, preloading ${ticks} ticks of ${payloadBytes} B ...`);
  const sandbox = await startSandboxProcess(ticks, payloadBytes, perTransaction);
  say(`sandbox ready (offsets up to ${sandbox.lastOffset})`);
  try {
    return await body({
      sandbox,
      token: mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 }),
    });
  } finally {
    await sandbox.stop();
  }
}

/** A fresh gateway in front of `ledger` for the length of `body`: what it measures is all it answers. */
async function withGateway<T>(ledger: Ledger, body: (gateway: GatewayProcess) => Promise<T>): Promise<T> {
  // One list-twin answer holds the whole range, as the WebSocket does.
  const gateway = await startGatewayProcess(
    ledger.sandbox.port,
    ["--websocket-config.http-list-max-elements-limit", String(ticks + 1000)],
    { nodeArgs: cpuProfArgs },
  );
  try {
    return await body({ port: gateway.port, pid: gateway.child.pid as number });
  } finally {
    await gateway.stop();
  }
}

/**
 * The update streams over `ledger`: with `cost`, a gateway per transport and their CPU per
 * element; else one gateway for both, what a client of one gateway sees (make bench's table).
 */
const streamOf = (phase: string, ledger: Ledger, cost: boolean) => {
  const read = (
    webSocketGateway: GatewayProcess,
    listGateway: GatewayProcess,
    ndjsonGateway: GatewayProcess,
  ) =>
    updateStream({
      cost,
      progress: progress(phase),
      sandboxPort: ledger.sandbox.port,
      webSocketGateway,
      listGateway,
      ndjsonGateway,
      party: ledger.sandbox.tickParty,
      lastOffset: ledger.sandbox.lastOffset,
      token: ledger.token,
      runs: Number(values.runs),
    });
  return cost
    ? withGateway(ledger, (ws) =>
        withGateway(ledger, (list) => withGateway(ledger, (ndjson) => read(ws, list, ndjson))),
      )
    : withGateway(ledger, (gateway) => read(gateway, gateway, gateway));
};

/** submit-and-wait through a gateway of its own, after `--warm-up` commands on each path. */
const submitAndWaitOn = (phase: string, ledger: Ledger, withCpu: boolean) =>
  withGateway(ledger, (gateway) =>
    submitAndWait({
      progress: progress(phase),
      sandboxPort: ledger.sandbox.port,
      gatewayPort: gateway.port,
      ...(withCpu && { gatewayPid: gateway.pid, sandboxPid: ledger.sandbox.child.pid as number }),
      party: ledger.sandbox.tickParty,
      token: ledger.token,
      commands: Number(values.commands),
      concurrency: Number(values.concurrency),
      warmUp,
    }),
  );

const single =
  runs("update-stream") || runs("submit-and-wait")
    ? await withSandbox(1, async (ledger) => {
        let updates: UpdateStreamResult | undefined;
        if (runs("update-stream")) {
          console.log(
            `update stream: ${ticks} ticks of ${payloadBytes} B, one per transaction, ` +
              `warm-up + ${values.runs} runs of direct gRPC, WebSocket and list twin ...`,
          );
          updates = await streamOf("update stream 1/tx", ledger, false);
        }
        if (!runs("submit-and-wait")) return { updates, commands: undefined };
        console.log(
          `submit-and-wait: ${values.commands} commands at concurrency ${values.concurrency} after ${warmUp} ...`,
        );
        return { updates, commands: await submitAndWaitOn("submit-and-wait", ledger, false) };
      })
    : { updates: undefined, commands: undefined };
let batched: UpdateStreamResult | undefined;
if (runs("update-stream")) {
  console.log(`update stream: ${ticks} ticks, ${values.batch} per transaction ...`);
  batched = await withSandbox(Number(values.batch), (ledger) =>
    streamOf(`update stream ${values.batch}/tx`, ledger, false),
  );
}

const CPU_PER_SUBMIT_TARGET_MS = 0.4;
const CPU_PER_GET_TARGET_MS = 0.1;
const SUBMIT_TARGET = 0.9;
const COST_WS_TARGET = 0.95;
const LIST_TARGET = 0.8;
const NDJSON_TARGET = 0.9;
const NDJSON_FIRST_ELEMENT_TARGET_MS = 100;
const LIST_RSS_TARGET = 2;

/** request-cost: the gateway's CPU per request and per element, with its throughput ratios. */
async function requestCost() {
  if (!runs("request-cost")) return undefined;
  const commands = Number(values.commands);
  const concurrency = Number(values.concurrency);
  const single = await withSandbox(1, async (ledger) => {
    console.log(`request cost: update streams of ${ticks} ticks, 1 per transaction ...`);
    const stream = await streamOf("request cost stream 1/tx", ledger, true);
    console.log(
      `request cost: ${commands} commands of each kind at concurrency ${concurrency} after ${warmUp} ...`,
    );
    const submit = await submitAndWaitOn("request cost submit-and-wait", ledger, true);
    const unary = (gateway: GatewayProcess) => ({
      gatewayPort: gateway.port,
      gatewayPid: gateway.pid,
      party: ledger.sandbox.tickParty,
      token: ledger.token,
      requests: commands,
      concurrency,
      warmUp,
      progress: progress("request cost"),
    });
    const forTransaction = await withGateway(ledger, (gateway) =>
      submitAndWaitForTransactionCost(unary(gateway)),
    );
    const ledgerEnd = await withGateway(ledger, (gateway) => ledgerEndCost(unary(gateway)));
    return { stream, submit, forTransaction, ledgerEnd };
  });
  console.log(`request cost: update streams of ${ticks} ticks, ${values.batch} per transaction ...`);
  const batchedStream = await withSandbox(Number(values.batch), (ledger) =>
    streamOf(`request cost stream ${values.batch}/tx`, ledger, true),
  );
  const list = single.stream.gatewayCost;
  const listRssRatio = list
    ? round2((list.listPeakRssBytes - list.listRssBeforeBytes) / list.listAnswerBytes)
    : undefined;
  const submitCpu = single.submit.gatewayCpuMsPerCommand ?? Number.NaN;
  const figures: RequestCostResult = {
    submitAndWait: single.submit,
    submitAndWaitForTransaction: single.forTransaction,
    ledgerEnd: single.ledgerEnd,
    updateStream: { eventsPerTransaction: 1, ...single.stream },
    updateStreamBatched: { eventsPerTransaction: Number(values.batch), ...batchedStream },
    gateways:
      "one per measured kind: WebSocket and list twin (per sandbox), submit-and-wait, " +
      `submit-and-wait-for-transaction, ledger-end; ${warmUp} requests or one read before each window`,
  };
  return {
    ...figures,
    targets: {
      cpuPerSubmitAndWait: {
        maxMs: CPU_PER_SUBMIT_TARGET_MS,
        ms: submitCpu,
        met: submitCpu <= CPU_PER_SUBMIT_TARGET_MS,
      },
      cpuPerGet: {
        maxMs: CPU_PER_GET_TARGET_MS,
        ms: single.ledgerEnd.gatewayCpuMsPerRequest,
        met: single.ledgerEnd.gatewayCpuMsPerRequest <= CPU_PER_GET_TARGET_MS,
      },
      submitAndWaitVsDirect: {
        min: SUBMIT_TARGET,
        ratio: single.submit.ratioToDirect.throughput,
        met: single.submit.ratioToDirect.throughput >= SUBMIT_TARGET,
      },
      webSocketVsDirect: ratiosAtLeast(COST_WS_TARGET, [
        single.stream.ratioToDirect.gatewayWebSocket,
        batchedStream.ratioToDirect.gatewayWebSocket,
      ]),
      listTwinVsDirect: ratiosAtLeast(LIST_TARGET, [
        single.stream.ratioToDirect.gatewayHttpList,
        batchedStream.ratioToDirect.gatewayHttpList,
      ]),
      ndjsonVsDirect: ratiosAtLeast(NDJSON_TARGET, [
        single.stream.ratioToDirect.gatewayNdjson ?? Number.NaN,
        batchedStream.ratioToDirect.gatewayNdjson ?? Number.NaN,
      ]),
      ndjsonFirstElement: {
        maxMs: NDJSON_FIRST_ELEMENT_TARGET_MS,
        elements: list?.elements,
        ms: single.stream.ndjsonFirstElementMs,
        met:
          (single.stream.ndjsonFirstElementMs ?? Number.POSITIVE_INFINITY) <= NDJSON_FIRST_ELEMENT_TARGET_MS,
      },
      listTwinPeakRss: {
        elements: list?.elements,
        maxTimesAnswer: LIST_RSS_TARGET,
        /** (peak RSS while answering - RSS before the request) / the answer's bytes. */
        timesAnswer: listRssRatio,
        met: listRssRatio !== undefined && listRssRatio <= LIST_RSS_TARGET,
      },
    },
  };
}
const round2 = (value: number) => Math.round(value * 100) / 100;
const requestCostResult = await requestCost();

const FANOUT_CPU_TARGET_MICROS = 1.5;
const IDLE_TARGET_BYTES = 16 * 1024;
const WORKERS_TARGET = 1.7;

/** fanout, idle, workers: one preloaded sandbox, a gateway per scenario, the client process. */
async function wave2(): Promise<Wave2Result | undefined> {
  if (!runs("fanout") && !runs("idle") && !runs("workers") && !runs("ws-compression")) return undefined;
  const fanoutTicks = Number(values["fanout-ticks"]);
  const say = progress("wave 2");
  say(`starting the sandbox, preloading ${fanoutTicks} ticks of ${payloadBytes} B ...`);
  const sandbox = await startSandboxProcess(fanoutTicks, payloadBytes, 1);
  const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
  const client = startBenchClient(true);
  const withGateway = async <T>(
    workers: number,
    body: (gateway: GatewayUnderTest) => Promise<T>,
    ledger: RunningSandbox = sandbox,
    args: string[] = [],
  ) => {
    const running = await startGatewayProcess(
      ledger.port,
      ["--websocket-config.http-list-max-elements-limit", String(fanoutTicks + 1000), ...args],
      {
        workers,
        raiseFdLimit: true,
        nodeArgs: cpuProfArgs,
      },
    );
    try {
      return await body({
        port: running.port,
        pid: running.child.pid as number,
        token,
        metrics: async () => (await fetch(`http://127.0.0.1:${running.port}/metrics`)).text(),
      });
    } finally {
      await running.stop();
    }
  };
  const result: Wave2Result = {};
  try {
    if (runs("fanout")) {
      const counts = values.subscribers.split(",").map(Number);
      const budget = Number(values.deliveries);
      result.fanout = await withGateway(1, async (gateway) => {
        say("fanout: warm-up (10 subscribers, 1000 elements) ...");
        await fanoutPoint(client, gateway, sandbox.tickParty, sandbox.lastOffset, 10, 1000);
        const points: FanoutPoint[] = [];
        for (const n of counts) {
          const replay = values["fanout-replay"] === "on";
          const elements = replay ? sandbox.lastOffset : Math.min(sandbox.lastOffset, Math.floor(budget / n));
          const point = {
            ...(await fanoutPoint(client, gateway, sandbox.tickParty, sandbox.lastOffset, n, elements)),
            ...(replay && { replay: true }),
          };
          say(
            `fanout${replay ? " replay" : ""} N=${n} x ${elements} elements: ${point.deliveriesPerSecond} deliveries/s, ` +
              `${point.gatewayCpuMicrosPerDelivery} µs gateway CPU per delivery, ${point.upstreamStreams} upstream streams ` +
              `(catch-ups ${JSON.stringify(point.catchUps)}, ${point.detaches} detaches, ${point.handovers} handovers), ` +
              `${point.admissionProbes} admission probes, ${point.getUpdatesCalls} GetUpdates calls` +
              (point.errors > 0 ? `, ${point.errors} sockets not closed 1000` : ""),
          );
          points.push(point);
        }
        return { upstreamCallsCountedBy: UPSTREAM_CALLS_SOURCE, gatewayWorkers: 1, points };
      });
    }
    if (runs("ws-compression")) {
      // Subscribers that offer permessage-deflate, against a gateway that declines it (off) and
      // one that accepts it (on): bytes, CPU and memory per delivery and per connection.
      result.wsCompression = {};
      for (const mode of ["off", "on"] as const) {
        result.wsCompression[mode] = await withGateway(
          1,
          async (gateway) => {
            say(`ws-compression ${mode}: warm-up (10 subscribers, 1000 elements) ...`);
            await fanoutPoint(client, gateway, sandbox.tickParty, sandbox.lastOffset, 10, 1000, true);
            const points: FanoutPoint[] = [];
            // N=100 reads 1000 elements: within the shared stream's history (1024), so that every
            // subscriber reads the one shared call; past it late joiners catch up on calls of their
            // own, which measures issue 23's replay crowd, not compression.
            for (const [n, elements] of [
              [1, Math.min(sandbox.lastOffset, 20_000)],
              [100, Math.min(sandbox.lastOffset, 1_000)],
            ] as const) {
              const point = await fanoutPoint(
                client,
                gateway,
                sandbox.tickParty,
                sandbox.lastOffset,
                n,
                elements,
                true,
              );
              const c = point.compression;
              say(
                `ws-compression ${mode} N=${n} x ${elements}: ${point.gatewayCpuMicrosPerDelivery} µs gateway CPU per delivery, ` +
                  `${c?.wireBytesPerDelivery} B on the wire per delivery (text ${c?.textBytesPerDelivery} B), ` +
                  `${c?.rssPerConnectionBytes} B RSS per connection, peak RSS +${Math.round((c?.peakRssGrowthBytes ?? 0) / 1024)} KiB`,
              );
              points.push(point);
            }
            return points;
          },
          sandbox,
          ["--websocket-config.compression", mode],
        );
      }
    }
    if (runs("idle")) {
      const n = Number(values["idle-connections"]);
      say(`idle: ${n} idle WebSocket connections ...`);
      result.idleConnections = await withGateway(1, (gateway) => idleConnections(client, gateway, n));
      say(`idle: ${result.idleConnections.rssPerConnectionBytes} B resident per connection`);
    }
    if (runs("workers")) {
      const batch = Number(values["workers-batch"]);
      const workersTicks = Number(values["workers-ticks"]);
      say(`workers: a second sandbox, ${workersTicks} ticks in transactions of ${batch} ...`);
      const batched = await startSandboxProcess(workersTicks, payloadBytes, batch);
      try {
        // The whole preloaded range, bounded: every stream is its own call (never shared).
        const range = updatesRequest(batched.tickParty, 0, batched.lastOffset);
        const scenario =
          `WebSocket /v2/updates of ${workersTicks / batch} transactions of ${batch} events (bounded, read to the end), ` +
          `${values["workers-concurrency"]} client loops, ${values["workers-seconds"]} s`;
        const points: WorkersPoint[] = [];
        for (const workers of [1, 2]) {
          say(`workers: ${workers} worker(s), ${scenario} ...`);
          const point = await withGateway(
            workers,
            (gateway) =>
              streamLoad(
                client,
                gateway,
                workers,
                batched.child.pid as number,
                range,
                Number(values["workers-concurrency"]),
                Number(values["workers-seconds"]),
              ),
            batched,
          );
          say(
            `workers ${workers}: ${point.framesPerSecond} transactions/s, CPU s gateway ${point.gatewayCpuSeconds} ` +
              `sandbox ${point.sandboxCpuSeconds} client ${point.clientCpuSeconds} in ${point.seconds} s`,
          );
          points.push(point);
        }
        result.workers = { scenario, points };
      } finally {
        await batched.stop();
      }
    }
  } finally {
    await client.stop();
    await sandbox.stop();
  }
  return result;
}

const wave2Result = await wave2();

/** fairness: a small sandbox of its own, a gateway per caps setting, two users with a party each. */
async function fairness(): Promise<FairnessResult | undefined> {
  if (!runs("fairness")) return undefined;
  const say = progress("fairness");
  say("starting the sandbox, preloading 1000 ticks ...");
  const sandbox = await startSandboxProcess(1000, payloadBytes, 1);
  const admin = mintToken({ user: "participant_admin", secret: "bench", expiresInSeconds: 3600 });
  const victimRate = Number(values["fairness-victim-rate"]);
  const seconds = Number(values["fairness-seconds"]);
  const rounds = Number(values["fairness-rounds"]);
  const result: FairnessResult = {
    scenario:
      `user B: submit-and-wait from ${values["fairness-victim-concurrency"]} loops paced to ${victimRate} commands/s and ` +
      `one WebSocket on its party's updates; user A (a process of its own): submit-and-wait from ` +
      `${values["flood-concurrency"]} loops back to back (a 429 retried at once) and ${values["flood-sockets"]} ` +
      `WebSockets with an update stream each, reopened when closed` +
      (values["flood-nice"] === "0" ? "" : `, at nice ${values["flood-nice"]}`) +
      `; B measured unloaded then flooded ${rounds} time(s), then unloaded again, ` +
      `${seconds} s each, after a flooded warm-up window; figures compared as medians; one gateway worker`,
    seconds,
    rounds,
    victim: {
      concurrency: Number(values["fairness-victim-concurrency"]),
      commandsPerSecond: victimRate,
      webSockets: 1,
    },
    flood: {
      concurrency: Number(values["flood-concurrency"]),
      webSockets: Number(values["flood-sockets"]),
      nice: Number(values["flood-nice"]),
    },
    caps: FAIRNESS_CAPS,
    runs: [],
  };
  try {
    let parties: { victim: string; flood: string } | undefined;
    for (const caps of fairnessModes as FairnessRun["caps"][]) {
      const args = caps === "on" ? capArgs() : [];
      const gateway = await startGatewayProcess(sandbox.port, args, {
        raiseFdLimit: true,
        nodeArgs: cpuProfArgs,
      });
      try {
        const base = `http://127.0.0.1:${gateway.port}`;
        parties ??= {
          victim: await allocateParty(base, admin, "fair-victim"),
          flood: await allocateParty(base, admin, "fair-flood"),
        };
        const token = (party: string) =>
          mintToken({ user: `actAs-${party}`, secret: "bench", expiresInSeconds: 3600 });
        result.runs.push(
          await fairnessRun(
            {
              base,
              gatewayPid: gateway.child.pid as number,
              sandboxPid: sandbox.child.pid as number,
              victim: { party: parties.victim, token: token(parties.victim) },
              flood: { party: parties.flood, token: token(parties.flood) },
              seconds,
              rounds,
              victimConcurrency: result.victim.concurrency,
              victimRate,
              floodConcurrency: result.flood.concurrency,
              floodSockets: result.flood.webSockets,
              floodNice: result.flood.nice,
              progress: say,
            },
            caps,
            args,
          ),
        );
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    await sandbox.stop();
  }
  return result;
}
const fairnessResult = await fairness();
const fairnessCapped = fairnessResult?.runs.find((run) => run.caps === "on");

const met = (u: UpdateStreamResult) => u.ratioToDirect.gatewayWebSocket >= WS_TARGET;
const root = projectRoot();
const { commit, machine } = provenance(root);

const fanoutAt100 = wave2Result?.fanout?.points.find((p) => p.subscribers === 100);
const workersRatio = (() => {
  const [one, two] = wave2Result?.workers?.points ?? [];
  const rate = (p: WorkersPoint) => p.framesPerSecond ?? p.requestsPerSecond;
  return one && two ? Math.round((rate(two) / rate(one)) * 100) / 100 : undefined;
})();
if (wave2Result?.workers && workersRatio !== undefined) wave2Result.workers.ratio = workersRatio;
const wave2Targets = wave2Result && {
  ...(fanoutAt100 && {
    cpuPerDeliveryAt100: {
      maxMicros: FANOUT_CPU_TARGET_MICROS,
      micros: fanoutAt100.gatewayCpuMicrosPerDelivery,
      met: fanoutAt100.gatewayCpuMicrosPerDelivery <= FANOUT_CPU_TARGET_MICROS,
    },
  }),
  ...(wave2Result.fanout && {
    oneUpstreamPerDistinctRequest: {
      calls: wave2Result.fanout.points.map((p) => p.upstreamStreams),
      met: wave2Result.fanout.points.every((p) => p.upstreamStreams === 1),
    },
  }),
  ...(wave2Result.idleConnections && {
    idleConnectionRss: {
      maxBytes: IDLE_TARGET_BYTES,
      bytes: wave2Result.idleConnections.rssPerConnectionBytes,
      met: wave2Result.idleConnections.rssPerConnectionBytes <= IDLE_TARGET_BYTES,
    },
  }),
  ...(workersRatio !== undefined && {
    twoWorkersVsOne: { min: WORKERS_TARGET, ratio: workersRatio, met: workersRatio >= WORKERS_TARGET },
  }),
};

const result = {
  date: startedAt.toISOString(),
  node: process.version,
  cpus: machine.cpus,
  commit,
  machine,
  command: `node dist/bench/run.js ${commandArgs}`.trim(),
  ...(values.note !== undefined && { note: values.note }),
  /** The machine is shared: its load average when the run started and ended. */
  loadAverage: { start: loadAtStart, end: loadavg().map((l) => Math.round(l * 100) / 100) },
  ...(single.updates && { updateStream: { eventsPerTransaction: 1, ...single.updates } }),
  ...(batched && { updateStreamBatched: { eventsPerTransaction: Number(values.batch), ...batched } }),
  ...(single.commands && { submitAndWait: single.commands }),
  ...(wave2Result && wave2Result),
  ...(requestCostResult && { requestCost: requestCostResult }),
  ...(fairnessResult && { fairness: fairnessResult }),
  targets: {
    ...(single.updates &&
      batched && {
        webSocketVsDirect: { min: WS_TARGET, met: met(single.updates), metBatched: met(batched) },
      }),
    ...wave2Targets,
    ...(fairnessCapped && {
      fairUnderLoad: {
        maxP99Ratio: 1 + FAIRNESS_TARGET,
        minDeliveriesRatio: 1 - FAIRNESS_TARGET,
        ratios: fairnessCapped.ratios,
        met: fairnessCapped.met,
      },
    }),
  },
};
const dir = join(root, "bench", "results");
mkdirSync(dir, { recursive: true });
const file = join(dir, resultFileName(startedAt, commit));
// A new file per run ("wx": never overwrite one), so committed results stay what they were.
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`, { flag: "wx" });
const charts = wave2Result ? writeCharts(file, wave2Result) : [];

if (single.updates && batched) {
  const row = (u: UpdateStreamResult) => ({
    "direct gRPC": u.eventsPerSecond.directGrpc,
    "gateway WebSocket": u.eventsPerSecond.gatewayWebSocket,
    "gateway HTTP list": u.eventsPerSecond.gatewayHttpList,
    "WS vs direct": u.ratioToDirect.gatewayWebSocket,
    "list vs direct": u.ratioToDirect.gatewayHttpList,
  });
  console.table({ "1 event/tx": row(single.updates), [`${values.batch} events/tx`]: row(batched) });
  console.log(
    `gateway RSS: ${(single.updates.gatewayFirstWebSocketRssBytes / 2 ** 20).toFixed(0)} MiB streaming on a fresh gateway, ` +
      `${(single.updates.gatewayPeakRssBytes / 2 ** 20).toFixed(0)} MiB peak after whole-range list answers; ` +
      `WebSocket target >= ${WS_TARGET}: ${met(single.updates) ? "met" : "NOT met"} (1/tx), ` +
      `${met(batched) ? "met" : "NOT met"} (${values.batch}/tx)`,
  );
}
if (single.commands)
  console.table({ "direct gRPC": single.commands.directGrpc, gateway: single.commands.gateway });
const verdict = (met: boolean | undefined) => (met === undefined ? "not run" : met ? "met" : "NOT met");
if (requestCostResult) {
  const r = requestCostResult;
  const stream = (u: UpdateStreamResult) => ({
    "WS µs/element": u.gatewayCost?.cpuMicrosPerElement.webSocket,
    "list µs/element": u.gatewayCost?.cpuMicrosPerElement.httpList,
    "NDJSON µs/element": u.gatewayCost?.cpuMicrosPerElement.ndjson,
    "WS vs direct": u.ratioToDirect.gatewayWebSocket,
    "list vs direct": u.ratioToDirect.gatewayHttpList,
    "NDJSON vs direct": u.ratioToDirect.gatewayNdjson,
    "NDJSON first ms": u.ndjsonFirstElementMs,
  });
  console.table({
    "submit-and-wait": {
      "gateway CPU ms/request": r.submitAndWait.gatewayCpuMsPerCommand,
      "vs direct": r.submitAndWait.ratioToDirect.throughput,
    },
    "submit-and-wait-for-transaction": {
      "gateway CPU ms/request": r.submitAndWaitForTransaction.gatewayCpuMsPerRequest,
    },
    "GET /v2/state/ledger-end": { "gateway CPU ms/request": r.ledgerEnd.gatewayCpuMsPerRequest },
  });
  console.table({
    "1 event/tx": stream(r.updateStream),
    [`${values.batch} events/tx`]: stream(r.updateStreamBatched),
  });
  console.log(
    `request-cost targets: ${Object.entries(r.targets)
      .map(([name, t]) => `${name} ${verdict(t.met)}`)
      .join(", ")}; load average ${loadAtStart.join(" ")} -> ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}
if (wave2Result?.fanout) {
  console.table(
    Object.fromEntries(
      wave2Result.fanout.points.map((p) => [
        `N=${p.subscribers}`,
        {
          "elements each": p.elementsPerSubscriber,
          "deliveries/s": p.deliveriesPerSecond,
          "gateway CPU µs/delivery": p.gatewayCpuMicrosPerDelivery,
          "upstream streams": p.upstreamStreams,
          handovers: p.handovers,
          "admission probes": p.admissionProbes,
          "GetUpdates calls": p.getUpdatesCalls,
        },
      ]),
    ),
  );
}
if (wave2Targets) {
  console.log(
    `targets: gateway CPU per delivery at N=100 <= ${FANOUT_CPU_TARGET_MICROS} µs: ${verdict(wave2Targets.cpuPerDeliveryAt100?.met)} ` +
      `(${wave2Targets.cpuPerDeliveryAt100?.micros ?? "-"}); one upstream call per N: ${verdict(wave2Targets.oneUpstreamPerDistinctRequest?.met)} ` +
      `(${wave2Targets.oneUpstreamPerDistinctRequest?.calls.join(", ") ?? "-"}); idle connection <= 16 KiB: ${verdict(wave2Targets.idleConnectionRss?.met)} ` +
      `(${wave2Targets.idleConnectionRss?.bytes ?? "-"} B); 2 workers >= ${WORKERS_TARGET}x one: ${verdict(wave2Targets.twoWorkersVsOne?.met)} ` +
      `(${workersRatio ?? "-"}x)`,
  );
}
if (fairnessResult) {
  console.table(
    Object.fromEntries(
      fairnessResult.runs.flatMap((run) =>
        run.windows.map((w, i) => [
          `caps ${run.caps}, ${i + 1}. ${w.load}`,
          {
            "B commands/s": w.victim.commandsPerSecond,
            "B p50 ms": w.victim.p50Ms,
            "B p99 ms": w.victim.p99Ms,
            "B deliveries/s": w.victim.deliveriesPerSecond,
            "A 200": w.flood?.submitAnswers["200"] ?? "-",
            "A 429": w.flood?.submitAnswers["429"] ?? "-",
            "A WS 1013": w.flood?.webSockets.closes["1013"] ?? "-",
            "CPU s gw/sb/B/A": `${w.cpuSeconds.gateway}/${w.cpuSeconds.sandbox}/${w.cpuSeconds.victim}/${w.cpuSeconds.flood ?? "-"}`,
          },
        ]),
      ),
    ),
  );
  for (const run of fairnessResult.runs)
    console.log(
      `fairness, caps ${run.caps}: flooded / unloaded (medians) p99 ${run.ratios.p99}x, deliveries/s ${run.ratios.deliveriesPerSecond}x ` +
        `(target: p99 <= ${1 + FAIRNESS_TARGET}x, deliveries >= ${1 - FAIRNESS_TARGET}x): ${verdict(run.met)}`,
    );
}
console.log(
  `wrote ${[file, ...charts].map((f) => relative(root, f)).join(", ")} (commit ${commit ? commit.id.slice(0, 7) : "?"}${commit?.dirty ? ", uncommitted changes" : ""}); ` +
    "commit them, then `make bench-readme` puts them in docs/performance.md",
);

/** The wave-2 charts, `<results file>-<chart>.svg` beside it; returns their paths. */
function writeCharts(resultFile: string, r: Wave2Result): string[] {
  const charts: [string, string][] = [];
  const fanout = r.fanout?.points;
  if (fanout) {
    const bars = (value: (p: FanoutPoint) => number) =>
      fanout.map((p) => ({ label: `N = ${p.subscribers}`, value: value(p) }));
    charts.push(
      [
        "fanout-deliveries",
        barChartSvg({
          title: "Deliveries/s to N identical WebSocket subscribers",
          unit: "deliveries/s",
          bars: bars((p) => p.deliveriesPerSecond),
        }),
      ],
      [
        "fanout-cpu",
        barChartSvg({
          title: "Gateway CPU per delivery",
          unit: "µs per delivered element",
          bars: bars((p) => p.gatewayCpuMicrosPerDelivery),
          target: {
            value: FANOUT_CPU_TARGET_MICROS,
            label: `target at N = 100: <= ${FANOUT_CPU_TARGET_MICROS} µs`,
          },
        }),
      ],
      [
        "fanout-upstreams",
        barChartSvg({
          title: "Upstream update streams for N identical subscribers",
          unit: "streams from the ledger (admission probes apart)",
          bars: bars((p) => p.upstreamStreams),
          target: { value: 1, label: "target: 1" },
        }),
      ],
    );
  }
  if (r.idleConnections) {
    charts.push([
      "idle",
      barChartSvg({
        title: `Gateway RSS per idle WebSocket (${r.idleConnections.connections} open)`,
        unit: "KiB per connection",
        bars: [
          {
            label: "measured",
            value: Math.round((r.idleConnections.rssPerConnectionBytes / 1024) * 10) / 10,
          },
        ],
        target: { value: 16, label: "target: <= 16 KiB" },
      }),
    ]);
  }
  if (r.workers) {
    const rate = (p: WorkersPoint) => p.framesPerSecond ?? p.requestsPerSecond;
    const one = r.workers.points[0] ? rate(r.workers.points[0]) : 1;
    charts.push([
      "workers",
      barChartSvg({
        title: "Streamed transactions/s, relative to 1 worker",
        unit: "x one worker",
        bars: r.workers.points.map((p) => ({
          label: `${p.workers} worker${p.workers > 1 ? "s" : ""}`,
          value: Math.round((rate(p) / one) * 100) / 100,
        })),
        target: { value: WORKERS_TARGET, label: `target: >= ${WORKERS_TARGET}x` },
      }),
    ]);
  }
  return charts.map(([name, svg]) => {
    const path = resultFile.replace(/\.json$/, `-${name}.svg`);
    writeFileSync(path, svg);
    return path;
  });
}

/** A target that every one of `ratios` must reach (1 and 10 events per transaction). */
function ratiosAtLeast(min: number, ratios: number[]): { min: number; ratios: number[]; met: boolean } {
  return { min, ratios, met: ratios.every((ratio) => ratio >= min) };
}
