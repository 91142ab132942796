import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { processCpuSeconds } from "../lib/proc-stats.js";
import {
  type BenchClient,
  type RunningSandbox,
  startBenchClient,
  startGatewayProcess,
  startSandboxProcess,
} from "../lib/processes.js";
import { round } from "../lib/stats.js";
import { tickCommands } from "../lib/tick-commands.js";
import { type LocalBench, tickOwnerToken } from "./ledger.js";
import type { WorkersScalingOptions } from "./options.js";
import type { CpuPlan, WorkersScalingPoint, WorkersScalingResult } from "./result.js";
import { updatesRequest } from "./scenarios/fanout.js";

/**
 * workers-scaling (issue 23, items 4 and 5): the same load against a fresh gateway per worker
 * count, with the gateway, the sandbox and the client processes each kept on cores of their own
 * (`taskset -c`) where the machine has them, so that what one more worker gives is not what the
 * ledger or the clients take away.
 *
 * streams: bounded WebSocket /v2/updates of the preloaded range read to the end, again and again:
 * transcoding-bound, the gateway's CPU is most of it. submit: POST /v2/commands/submit-and-wait
 * of one tick each: per-request cost, ledger-bound sooner. Each point is warmed, then measured:
 * throughput and every process's CPU over the window.
 */

/**
 * Cores for each process: as given, or pinned only where there are enough to keep them apart
 * (12 or more, and taskset there): the gateway up to 8, the sandbox 2, the clients the rest.
 */
export function cpuPlan(given: WorkersScalingOptions["cpus"], cores: number, taskset: boolean): CpuPlan {
  if (given.gateway !== undefined || given.sandbox !== undefined || given.clients !== undefined)
    return { ...given, why: "as given" };
  if (cores < 12 || !taskset)
    return { why: `unpinned: ${cores} cores${taskset ? "" : ", no taskset"}; every process shares them` };
  const gateway = Math.min(8, cores - 6);
  return {
    gateway: `0-${gateway - 1}`,
    sandbox: `${gateway}-${gateway + 1}`,
    clients: `${gateway + 2}-${cores - 1}`,
    why: `${cores} cores: gateway, sandbox and clients on cores of their own`,
  };
}

export async function workersScaling(bench: LocalBench): Promise<WorkersScalingResult | undefined> {
  if (!bench.options.scenarios.has("workers-scaling")) return undefined;
  const o = bench.options.workersScaling;
  const say = bench.progress("workers-scaling");
  const cpus = cpuPlan(o.cpus, availableParallelism(), spawnSync("taskset", ["-V"]).status === 0);
  say(`cpus: ${JSON.stringify(cpus)}`);
  say(`starting the sandbox, preloading ${o.ticks} ticks in transactions of ${o.batch} ...`);
  const sandbox = await startSandboxProcess(o.ticks, bench.options.payloadBytes, o.batch, cpus.sandbox);
  const clients = Array.from({ length: o.clients }, () =>
    startBenchClient(true, "bench/lib/bench-client", cpus.clients),
  );
  const results: WorkersScalingResult["results"] = {};
  try {
    for (const load of o.loads) {
      const concurrency = load === "streams" ? o.streamConcurrency : o.submitConcurrency;
      const points: WorkersScalingPoint[] = [];
      for (const workers of o.workers) {
        say(`${load}: ${workers} worker(s) ...`);
        const p = await point(bench, { load, workers, concurrency, sandbox, clients, cpus });
        const one = points.find((q) => q.workers === 1);
        if (one) p.ratio = round(p.perSecond / one.perSecond, 2);
        say(`${load} ${workers}: ${JSON.stringify(p)}`);
        points.push(p);
      }
      results[load] = {
        unit: load === "streams" ? `transactions of ${o.batch} events` : "commands",
        concurrency,
        points,
      };
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox.stop();
  }
  return {
    cpus,
    seconds: o.seconds,
    warmUpSeconds: o.warmUpSeconds,
    clients: o.clients,
    ticks: o.ticks,
    batch: o.batch,
    results,
  };
}

interface PointSetting {
  load: "streams" | "submit";
  workers: number | "default";
  concurrency: number;
  sandbox: RunningSandbox;
  clients: BenchClient[];
  cpus: CpuPlan;
}

interface ClientAnswer {
  frames?: number;
  requests?: number;
  failures: number;
  seconds: number;
}

/** Each client gets its share of the loops; their answers are summed by the caller. */
function acrossClients(clients: BenchClient[], job: object, concurrency: number): Promise<ClientAnswer[]> {
  const each = Math.ceil(concurrency / clients.length);
  for (const client of clients) client.send({ ...job, concurrency: each });
  return Promise.all(clients.map((client) => client.next<ClientAnswer>()));
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);

async function point(bench: LocalBench, s: PointSetting): Promise<WorkersScalingPoint> {
  const o = bench.options.workersScaling;
  const { sandbox, clients } = s;
  const gateway = await startGatewayProcess(
    sandbox.port,
    ["--websocket-config.http-list-max-elements-limit", String(o.ticks + 1000)],
    {
      workers: s.workers,
      raiseFdLimit: true,
      nodeArgs: bench.cpuProfArgs,
      ...(s.cpus.gateway && { cpus: s.cpus.gateway }),
    },
  );
  try {
    const token = tickOwnerToken(sandbox);
    const job =
      s.load === "streams"
        ? {
            kind: "streams",
            url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
            token,
            request: updatesRequest(sandbox.tickParty, 0, sandbox.lastOffset),
          }
        : {
            kind: "http",
            url: `http://127.0.0.1:${gateway.port}/v2/commands/submit-and-wait`,
            token,
            body: JSON.stringify(tickCommands("workers-scaling-@ID@", sandbox.tickParty, 1)),
            unique: "@ID@",
          };
    await acrossClients(clients, { ...job, seconds: o.warmUpSeconds }, s.concurrency);
    const gatewayPid = gateway.child.pid as number;
    const sandboxPid = sandbox.child.pid as number;
    const clientPids = clients.map((c) => c.child.pid as number);
    const before = {
      gateway: processCpuSeconds(gatewayPid),
      sandbox: processCpuSeconds(sandboxPid),
      clients: cpuOf(clientPids),
    };
    const answers = await acrossClients(clients, { ...job, seconds: o.seconds }, s.concurrency);
    const window = Math.max(...answers.map((a) => a.seconds));
    const done = answers.reduce((sum, a) => sum + ((s.load === "streams" ? a.frames : a.requests) ?? 0), 0);
    const gatewayCpu = processCpuSeconds(gatewayPid) - before.gateway;
    return {
      workers: s.workers,
      threads: gateway.workers,
      seconds: round(window, 3),
      perSecond: Math.round(done / window),
      failures: answers.reduce((sum, a) => sum + a.failures, 0),
      cores: {
        gateway: round(gatewayCpu / window, 2),
        sandbox: round((processCpuSeconds(sandboxPid) - before.sandbox) / window, 2),
        clients: round((cpuOf(clientPids) - before.clients) / window, 2),
      },
      gatewayCpuMicrosPer: round((gatewayCpu * 1e6) / Math.max(1, done), 1),
    };
  } finally {
    await gateway.stop();
  }
}
