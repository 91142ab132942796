import WebSocket from "ws";
import { SAMPLE_PACKAGE_ID } from "../../../src/sandbox/sample-package/index.js";
import { DirectLedger } from "../../lib/grpc-direct.js";
import { mainThreadRun, threadsCpuSeconds } from "../../lib/proc-stats.js";
import type { BenchClient } from "../../lib/processes.js";
import { round } from "../../lib/stats.js";
import type { StormAnswer } from "../../lib/storm-client.js";
import { type GatewayUnderTest, updatesRequest } from "./fanout.js";

/**
 * A reconnect storm (issue 39): N WebSockets open the /v2/updates stream from offset 0 at once,
 * as every subscriber of a restarted gateway does, while E established subscribers are already
 * streaming live ticks. It measures what the crowd costs the gateway (CPU per start, from each thread's /proc schedstat,
 * less the established load's own rate) and the ledger (calls per start), how long until every
 * newcomer has its first element, and what the storm does to the established subscribers'
 * delivery delay (each live tick carries the time it was submitted, directly to the ledger, in
 * its payload).
 */
export interface StormPoint {
  /**
   * cold: the first storm of its size on a fresh gateway (after 200 sockets that load its
   * modules), as a restarted gateway meets it: V8 still compiles the start's code as it goes.
   * warm: a second storm of the same size once the first came and went, as a running gateway
   * meets a balancer's moved connections. Absent in results before both were measured: cold.
   */
  round?: "cold" | "warm";
  subscribers: number;
  /** Distinct tokens the crowd's sockets carry (socket i the (i mod K)-th). */
  tokens: number;
  /** Distinct queries (socket i the (i mod Q)-th): distinct streams the gateway shares. */
  queries: number;
  /** websocket-config.upgrades-per-second the gateway ran with (0: unpaced). */
  upgradesPerSecond: number;
  /** From the storm's start until the last socket had its first element. */
  firstAllSeconds: number;
  p50FirstSeconds: number;
  p99FirstSeconds: number;
  opened: number;
  failed: number;
  /** Why they failed (error messages, close codes, statuses), counted. */
  failures?: Record<string, number>;
  /**
   * Of the failed, sockets uWS shut down inside their corked upgrade (the gateway's
   * ledger_gateway_ws_upgrades_lost_in_cork_total over the window): a 1006 of uWebSockets#1929,
   * after which the worker upgrades uncorked. Absent when none (and in results before it was read).
   */
  lostInCork?: number;
  /** Upgrades answered 503 (pacing), each tried again after its Retry-After. */
  refused: number;
  gatewayCpuSeconds: number;
  /** Gateway CPU per start: the window's CPU less the established load's rate over it, / N. */
  gatewayCpuMicrosPerStart: number;
  /** The same, the window's whole CPU (the established load's share included). */
  grossCpuMicrosPerStart: number;
  /**
   * What bare uWebSockets.js spends per start on the same crowd (bench/lib/bare-storm-server.ts:
   * the upgrade corked after an asynchronous step, the gateway's first frames corked in answer
   * to the query), measured right after this storm: the reference issue 39's target is a
   * multiple of. Absent in results before it was measured.
   */
  bare?: StormCost;
  /** gatewayCpuMicrosPerStart / bare.cpuMicrosPerStart: the machine's speed divided out. */
  timesBare?: number;
  /** Every gRPC call the gateway made to the ledger over the window, by method. */
  ledgerCalls: Record<string, number>;
  /**
   * The sandbox's CPU in cores (CPU seconds a second) over the window and over the 2 s before it:
   * how busy the crowd's ledger calls kept the ledger, here on the same two cores as the gateway
   * and the clients, whose delays the established figures include. Not less a rate as the
   * gateway's: the sandbox's own collections make its 2 s rate too noisy to subtract. Absent
   * against a ledger of another machine (and in results before it was read).
   */
  ledgerCores?: { before: number; during: number };
  ledgerCallsPerStart: number;
  /** Delivery delay (ms, submit to receipt) of the established subscribers' live ticks. */
  established: { subscribers: number; before: DelayFigures; during: DelayFigures };
  /**
   * The gateway's longest event-loop stall over the storm (prom-client's
   * nodejs_eventloop_lag_max_seconds, 10 ms resolution): what of the established delay the
   * gateway's own thread held, the rest being the machine's (its cores are shared here).
   */
  gatewayLoopLagMaxMs?: number;
}

/** What a storm cost a server process (measuredStorm). */
export interface StormCost {
  /** All its threads' CPU per start, until every socket had its first frame. */
  cpuMicrosPerStart: number;
  /** Of which its main thread's (the event loop's). */
  mainThreadMicrosPerStart: number;
  /** Times its main thread went to sleep and was woken, per start. */
  mainThreadSleepsPerStart: number;
  firstAllSeconds: number;
  failed: number;
}

interface DelayFigures {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface StormClients {
  /** The established subscribers' process. */
  established: BenchClient;
  /** The crowd's process. */
  storm: BenchClient;
}

/**
 * The crowd's queries: `count` distinct forms of one party's update stream from offset 0 (shape
 * and verbosity vary), each with the same first element.
 */
export function stormQueries(party: string, count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => {
    const request = updatesRequest(party, 0, undefined);
    const { includeTransactions } = request.updateFormat;
    return {
      ...request,
      updateFormat: {
        includeTransactions: {
          eventFormat: { ...includeTransactions.eventFormat, verbose: i % 2 === 1 },
          transactionShape: i % 4 >= 2 ? "TRANSACTION_SHAPE_LEDGER_EFFECTS" : "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    };
  });
}

/** The most distinct forms stormQueries makes. */
export const STORM_QUERY_FORMS = 4;

/**
 * Submits a Bench:Tick every `everyMs` directly to the ledger, its payload the time it was sent
 * (ms since the epoch), until stopped: the established subscribers' live elements.
 */
export function startTicker(sandboxPort: number, token: string, party: string, everyMs: number) {
  const direct = new DirectLedger(sandboxPort, token);
  let seq = 0;
  const run = `${process.pid}-${Date.now()}`;
  const timer = setInterval(() => {
    const stamp = (performance.timeOrigin + performance.now()).toFixed(3);
    direct
      .submitAndWait({
        commands: {
          commandId: `storm-tick-${run}-${seq}`,
          actAs: [party],
          commands: [
            {
              create: {
                templateId: { packageId: SAMPLE_PACKAGE_ID, moduleName: "Bench", entityName: "Tick" },
                createArguments: {
                  fields: [
                    { value: { party } },
                    { value: { int64: String(seq++) } },
                    { value: { text: stamp } },
                  ],
                },
              },
            },
          ],
        },
      })
      .catch(() => undefined);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      direct.close();
    },
  };
}

/**
 * The frames the gateway answers a crowd's query with, as a subscriber receives them: every frame
 * until `settleMs` after the first (the crowd reads its few elements and nothing more). What the
 * bare reference answers each query with.
 */
export function firstFrames(url: string, token: string, request: unknown, settleMs = 500): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`], { perMessageDeflate: false });
    const frames: string[] = [];
    socket.once("open", () => socket.send(JSON.stringify(request)));
    socket.on("message", (data: Buffer) => {
      if (frames.push(data.toString("utf8")) === 1)
        setTimeout(() => {
          socket.close(1000);
          resolve(frames);
        }, settleMs);
    });
    socket.once("error", reject);
    socket.once("close", (code) => {
      if (frames.length === 0)
        reject(new Error(`the gateway closed the query's socket (${code}) before a frame`));
    });
  });
}

/**
 * A storm against a server process (port, pid) with no established load to subtract, such as the
 * bare reference: its CPU per start over the window until every socket had its first frame,
 * measured as the gateway's is (the sockets close after it).
 */
export async function measuredStorm(
  client: BenchClient,
  server: { port: number; pid: number },
  shape: Pick<StormShape, "subscribers" | "tokens" | "queries">,
): Promise<StormCost> {
  await sleep(250);
  const cpuBefore = threadsCpuSeconds(server.pid);
  const mainBefore = mainThreadRun(server.pid);
  client.send({
    kind: "storm",
    url: `ws://127.0.0.1:${server.port}/v2/updates`,
    tokens: shape.tokens,
    requests: shape.queries,
    n: shape.subscribers,
  });
  const answer = await client.next<StormAnswer>();
  const cpu = threadsCpuSeconds(server.pid) - cpuBefore;
  const main = mainThreadRun(server.pid);
  client.send({ kind: "close" });
  await client.next();
  return {
    cpuMicrosPerStart: round((cpu * 1e6) / shape.subscribers, 1),
    mainThreadMicrosPerStart: round(((main.cpuSeconds - mainBefore.cpuSeconds) * 1e6) / shape.subscribers, 1),
    mainThreadSleepsPerStart: round((main.sleeps - mainBefore.sleeps) / shape.subscribers, 2),
    firstAllSeconds: round(answer.firstAllMs / 1000, 3),
    failed: answer.failed,
  };
}

/** The longest event-loop delay since the last scrape, from /metrics text (ms). */
function loopLagMaxMs(metrics: string): number | undefined {
  const max = /^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(metrics)?.[1];
  return max === undefined ? undefined : round(Number(max) * 1000, 1);
}

/** Sockets lost inside their corked upgrade so far, every endpoint's, from /metrics text. */
function lostInCork(metrics: string): number {
  let lost = 0;
  for (const [, count] of metrics.matchAll(
    /^ledger_gateway_ws_upgrades_lost_in_cork_total\{[^}]*\} (\S+)$/gm,
  ))
    lost += Number(count);
  return lost;
}

/** Every client call the gateway counted, by method, from its /metrics text. */
function callsByMethod(metrics: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of metrics.split("\n")) {
    if (!line.startsWith("ledger_gateway_grpc_client_call_duration_seconds_count{")) continue;
    const method = /method="[^"]*?([A-Za-z]+Service\/[A-Za-z]+)"/.exec(line)?.[1] ?? "other";
    calls.set(method, (calls.get(method) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return calls;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowMs = () => performance.timeOrigin + performance.now();

export interface StormShape {
  subscribers: number;
  tokens: string[];
  queries: unknown[];
  upgradesPerSecond: number;
}

/**
 * One storm against a gateway whose established subscribers are already reading (the caller
 * opened them on `clients.established`): a 2 s window of the established load alone (its CPU
 * rate, its delays), then the crowd.
 */
export async function stormPoint(
  clients: StormClients,
  gateway: GatewayUnderTest,
  shape: StormShape,
  establishedSubscribers: number,
  warmth: "cold" | "warm",
  /** The ledger's process, when it runs on this machine (the sandbox): its CPU is read too. */
  ledgerPid?: number,
): Promise<StormPoint> {
  const url = `ws://127.0.0.1:${gateway.port}/v2/updates`;
  const ledgerCpu = () => (ledgerPid === undefined ? 0 : threadsCpuSeconds(ledgerPid));
  const quietFrom = nowMs();
  const quietCpu = threadsCpuSeconds(gateway.pid);
  const quietLedgerCpu = ledgerCpu();
  await sleep(2000);
  const quietSeconds = (nowMs() - quietFrom) / 1000;
  const baselineRate = (threadsCpuSeconds(gateway.pid) - quietCpu) / quietSeconds;
  const ledgerRate = (ledgerCpu() - quietLedgerCpu) / quietSeconds;
  clients.established.send({ kind: "delays", from: quietFrom, to: nowMs() });
  const before = await clients.established.next<DelayFigures>();

  // This scrape also restarts the event-loop lag's window (prom-client resets it when read). A
  // scrape holds the gateway's thread some 20 ms: the frames it delayed are received before the
  // storm's window opens.
  const metricsBefore = await gateway.metrics();
  const callsBefore = callsByMethod(metricsBefore);
  await sleep(250);
  const cpuBefore = threadsCpuSeconds(gateway.pid);
  const ledgerCpuBefore = ledgerCpu();
  const from = nowMs();
  clients.storm.send({
    kind: "storm",
    url,
    tokens: shape.tokens,
    requests: shape.queries,
    n: shape.subscribers,
  });
  const answer = await clients.storm.next<StormAnswer>();
  const to = nowMs();
  const cpu = threadsCpuSeconds(gateway.pid) - cpuBefore;
  const ledgerWindowCpu = ledgerCpu() - ledgerCpuBefore;
  clients.established.send({ kind: "delays", from, to });
  const during = await clients.established.next<DelayFigures>();
  // A call is counted when it ends: the probes and admissions have; give the last a moment.
  await sleep(300);
  const metricsAfter = await gateway.metrics();
  const callsAfter = callsByMethod(metricsAfter);
  const lagMax = loopLagMaxMs(metricsAfter);
  const lost = lostInCork(metricsAfter) - lostInCork(metricsBefore);
  const ledgerCalls: Record<string, number> = {};
  let calls = 0;
  for (const [method, count] of callsAfter) {
    const made = count - (callsBefore.get(method) ?? 0);
    if (made > 0) ledgerCalls[method] = made;
    calls += made;
  }
  clients.storm.send({ kind: "close" });
  await clients.storm.next();
  const n = shape.subscribers;
  const windowSeconds = (to - from) / 1000;
  const net = Math.max(0, cpu - baselineRate * windowSeconds);
  return {
    round: warmth,
    subscribers: n,
    tokens: shape.tokens.length,
    queries: shape.queries.length,
    upgradesPerSecond: shape.upgradesPerSecond,
    firstAllSeconds: round(answer.firstAllMs / 1000, 3),
    p50FirstSeconds: round(answer.p50FirstMs / 1000, 3),
    p99FirstSeconds: round(answer.p99FirstMs / 1000, 3),
    opened: answer.opened,
    failed: answer.failed,
    ...(answer.failures && { failures: answer.failures }),
    ...(lost > 0 && { lostInCork: lost }),
    refused: answer.refused,
    gatewayCpuSeconds: round(cpu, 3),
    gatewayCpuMicrosPerStart: round((net * 1e6) / n, 1),
    grossCpuMicrosPerStart: round((cpu * 1e6) / n, 1),
    ledgerCalls,
    ledgerCallsPerStart: round(calls / n, 4),
    ...(ledgerPid !== undefined && {
      ledgerCores: { before: round(ledgerRate, 3), during: round(ledgerWindowCpu / windowSeconds, 3) },
    }),
    established: { subscribers: establishedSubscribers, before, during },
    ...(lagMax !== undefined && { gatewayLoopLagMaxMs: lagMax }),
  };
}
