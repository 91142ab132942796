/**
 * Gateway worker threads on a machine with cores to spare (issue 23, item 5): the same load
 * against 1, 2, 4 and 8 workers (and the gateway's own default), with the gateway, the sandbox
 * and the client processes each kept on cores of their own (`taskset -c`), so that what one
 * more worker gives is not what the ledger or the clients take away.
 *
 *   node dist/bench/workers-scaling.js [--workers 1,2,4,8,default] [--scenarios streams,submit] ...
 *
 * streams: bounded WebSocket /v2/updates of the preloaded range read to the end, again and
 * again, from `--stream-concurrency` loops spread over `--clients` processes: transcoding-bound,
 * the gateway's CPU is most of it. submit: POST /v2/commands/submit-and-wait from
 * `--submit-concurrency` loops: per-request cost, ledger-bound sooner. Each point is a fresh
 * gateway, warmed for `--warm-up-seconds`, then measured for `--seconds`: throughput and every
 * process's CPU over the window. The results file goes to `--out`.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { mintToken } from "../src/jwt/mint-token.js";
import { projectRoot } from "../src/proto/project-root.js";
import { commandLine } from "./lib/command-line.js";
import { processCpuSeconds } from "./lib/proc-stats.js";
import {
  type BenchClient,
  type RunningSandbox,
  startBenchClient,
  startGatewayProcess,
  startSandboxProcess,
} from "./lib/processes.js";
import { provenance, resultFileName } from "./lib/results.js";
import { round } from "./lib/stats.js";
import { tickCommands } from "./lib/tick-commands.js";
import { updatesRequest } from "./scenarios/fanout.js";

const { values } = commandLine(
  "workers-scaling.js",
  {
    workers: { type: "string", default: "1,2,4,8,default" },
    scenarios: { type: "string", default: "streams,submit" },
    seconds: { type: "string", default: "10" },
    "warm-up-seconds": { type: "string", default: "5" },
    clients: { type: "string", default: "4" },
    "stream-concurrency": { type: "string", default: "64" },
    "submit-concurrency": { type: "string", default: "64" },
    ticks: { type: "string", default: "20000" },
    batch: { type: "string", default: "10" },
    "gateway-cpus": { type: "string" },
    "sandbox-cpus": { type: "string" },
    "client-cpus": { type: "string" },
    out: { type: "string", default: "bench/results" },
    commit: { type: "string" },
  },
  undefined,
  [
    "--workers       worker counts, one gateway each; `default` leaves server.workers out",
    "--gateway-cpus  taskset CPU lists; by default, on 12 cores or more, the gateway gets the",
    "--sandbox-cpus  first 8 (fewer when the machine has fewer than 14), the sandbox the next 2,",
    "--client-cpus   the clients the rest; on fewer cores nothing is pinned (the file says so)",
    "--commit        the commit measured (whose dist/ ran), where the tree's .git does not say it",
  ].join("\n"),
);

type Scenario = "streams" | "submit";
const scenarios = values.scenarios.split(",") as Scenario[];
for (const s of scenarios) {
  if (s !== "streams" && s !== "submit") {
    console.error(`unknown scenario ${s}: streams, submit`);
    process.exit(2);
  }
}
const workerCounts = values.workers.split(",").map((w) => (w === "default" ? "default" : Number(w)));
const seconds = Number(values.seconds);
const warmUpSeconds = Number(values["warm-up-seconds"]);
const clientCount = Number(values.clients);
const batch = Number(values.batch);

/** Cores for each process: pinned only where there are enough to keep them apart. */
function cpuPlan(): { gateway?: string; sandbox?: string; clients?: string; why: string } {
  const cores = availableParallelism();
  const taskset = spawnSync("taskset", ["-V"]).status === 0;
  const given = values["gateway-cpus"] ?? values["sandbox-cpus"] ?? values["client-cpus"];
  if (given !== undefined) {
    return {
      ...(values["gateway-cpus"] && { gateway: values["gateway-cpus"] }),
      ...(values["sandbox-cpus"] && { sandbox: values["sandbox-cpus"] }),
      ...(values["client-cpus"] && { clients: values["client-cpus"] }),
      why: "as given",
    };
  }
  if (cores < 12 || !taskset) {
    return { why: `unpinned: ${cores} cores${taskset ? "" : ", no taskset"}; every process shares them` };
  }
  const gateway = Math.min(8, cores - 6);
  return {
    gateway: `0-${gateway - 1}`,
    sandbox: `${gateway}-${gateway + 1}`,
    clients: `${gateway + 2}-${cores - 1}`,
    why: `${cores} cores: gateway, sandbox and clients on cores of their own`,
  };
}

const cpus = cpuPlan();
const root = projectRoot();
const startedAt = new Date();
const say = (line: string) => console.error(`[workers-scaling] ${line}`);
say(`cpus: ${JSON.stringify(cpus)}`);

interface Point {
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
  /** perSecond / the 1-worker point's. */
  ratio?: number;
}

const sandbox = await startSandboxProcess(Number(values.ticks), 64, batch, cpus.sandbox);
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const clients: BenchClient[] = Array.from({ length: clientCount }, () =>
  startBenchClient(true, "bench/bench-client", cpus.clients),
);

/** Each client gets its share of the loops; the answers are summed. */
async function acrossClients<T extends Record<string, number>>(
  job: object,
  concurrency: number,
): Promise<T[]> {
  const each = Math.ceil(concurrency / clientCount);
  for (const client of clients) client.send({ ...job, concurrency: each });
  return Promise.all(clients.map((client) => client.next<T>()));
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);

async function point(
  scenario: Scenario,
  workers: number | "default",
  ledger: RunningSandbox,
): Promise<Point> {
  const gateway = await startGatewayProcess(
    ledger.port,
    ["--websocket-config.http-list-max-elements-limit", String(Number(values.ticks) + 1000)],
    { workers, raiseFdLimit: true, ...(cpus.gateway && { cpus: cpus.gateway }) },
  );
  try {
    const job =
      scenario === "streams"
        ? {
            kind: "streams",
            url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
            token,
            request: updatesRequest(ledger.tickParty, 0, ledger.lastOffset),
          }
        : {
            kind: "http",
            url: `http://127.0.0.1:${gateway.port}/v2/commands/submit-and-wait`,
            token,
            body: JSON.stringify(tickCommands("workers-scaling-@ID@", ledger.tickParty, 1)),
            unique: "@ID@",
          };
    const concurrency = Number(values[scenario === "streams" ? "stream-concurrency" : "submit-concurrency"]);
    await acrossClients({ ...job, seconds: warmUpSeconds }, concurrency);
    const clientPids = clients.map((c) => c.child.pid as number);
    const before = {
      gateway: processCpuSeconds(gateway.child.pid as number),
      sandbox: processCpuSeconds(ledger.child.pid as number),
      clients: cpuOf(clientPids),
    };
    const answers = await acrossClients<{
      frames?: number;
      requests?: number;
      streams?: number;
      failures: number;
      seconds: number;
    }>({ ...job, seconds }, concurrency);
    const window = Math.max(...answers.map((a) => a.seconds));
    const done = answers.reduce((sum, a) => sum + ((scenario === "streams" ? a.frames : a.requests) ?? 0), 0);
    const gatewayCpu = processCpuSeconds(gateway.child.pid as number) - before.gateway;
    return {
      workers,
      threads: gateway.workers,
      seconds: round(window, 3),
      perSecond: Math.round(done / window),
      failures: answers.reduce((sum, a) => sum + a.failures, 0),
      cores: {
        gateway: round(gatewayCpu / window, 2),
        sandbox: round((processCpuSeconds(ledger.child.pid as number) - before.sandbox) / window, 2),
        clients: round((cpuOf(clientPids) - before.clients) / window, 2),
      },
      gatewayCpuMicrosPer: round((gatewayCpu * 1e6) / Math.max(1, done), 1),
    };
  } finally {
    await gateway.stop();
  }
}

const results: Partial<Record<Scenario, { unit: string; concurrency: number; points: Point[] }>> = {};
try {
  for (const scenario of scenarios) {
    const points: Point[] = [];
    for (const workers of workerCounts) {
      say(`${scenario}: ${workers} worker(s) ...`);
      const p = await point(scenario, workers, sandbox);
      const one = points.find((q) => q.workers === 1);
      if (one) p.ratio = round(p.perSecond / one.perSecond, 2);
      say(`${scenario} ${workers}: ${JSON.stringify(p)}`);
      points.push(p);
    }
    results[scenario] = {
      unit: scenario === "streams" ? `transactions of ${batch} events` : "commands",
      concurrency: Number(values[scenario === "streams" ? "stream-concurrency" : "submit-concurrency"]),
      points,
    };
  }
} finally {
  await Promise.all(clients.map((c) => c.stop()));
  await sandbox.stop();
}

const origin = provenance(root);
// A copied checkout's .git (if it has one) need not be the commit its dist was built from.
const commit = values.commit === undefined ? origin.commit : { id: values.commit, dirty: false };
const file = join(values.out, resultFileName(startedAt, commit).replace(/^gateway-/, "workers-scaling-"));
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: startedAt.toISOString(),
      command: `node dist/bench/workers-scaling.js ${process.argv.slice(2).join(" ")}`.trim(),
      commit,
      machine: origin.machine,
      cpus,
      loadAverage: loadavg().map((l) => round(l, 2)),
      seconds,
      warmUpSeconds,
      clients: clientCount,
      results,
    },
    null,
    2,
  )}\n`,
);
say(`wrote ${file}`);
