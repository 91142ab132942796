import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { projectRoot } from "../../src/proto/project-root.js";

/**
 * The bench runs the real processes, each in its own OS process so that they share the two
 * cores as they would in production: the sandbox participant, the gateway in front of it, and
 * the load clients in this process.
 */
export interface Running {
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

export interface RunningSandbox extends Running {
  /** The party owning the preloaded ticks. */
  readonly tickParty: string;
  readonly lastOffset: number;
}

const ROOT = projectRoot();
/** Compiled (make bench builds first) or sources under tsx, whichever this bench runs as. */
const COMPILED = import.meta.url.endsWith(".js");
const entry = (path: string) =>
  COMPILED ? [join(ROOT, "dist", `${path}.js`)] : ["--import", "tsx", join(ROOT, `${path}.ts`)];

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGTERM");
    await once(child, "exit");
  };
}

/**
 * The standalone sandbox with `ticks` preloaded Bench:Tick contracts; resolves with its gRPC
 * port (first stdout line) and the ticks' owner (its stderr preload line).
 */
export async function startSandboxProcess(
  ticks: number,
  payloadBytes: number,
  perTransaction = 1,
  /** `taskset -c` CPU list the sandbox runs on (the workers-scaling scenario); unset: any. */
  cpus?: string,
): Promise<RunningSandbox> {
  const args = [
    "--port",
    "0",
    "--log-level",
    "warn",
    "--preload",
    `ticks=${ticks},payloadBytes=${payloadBytes},party=bench,perTransaction=${perTransaction}`,
  ];
  const child = spawnNode([...entry("src/sandbox/main"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    cpus,
  });
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
      resolve(Number(line)),
    );
    child.once("exit", () => reject(new Error("the sandbox exited before printing its port")));
  });
  const preload = new Promise<{ party: string; last: number }>((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
      const match = /^preloaded \d+ ticks owned by (\S+) at offsets \d+\.\.(\d+)$/.exec(line);
      if (match) resolve({ party: match[1] as string, last: Number(match[2]) });
      else process.stderr.write(`sandbox: ${line}\n`);
    });
    child.once("exit", () => reject(new Error("the sandbox exited before preloading")));
  });
  const [sandboxPort, preloaded] = await Promise.all([port, preload]);
  return {
    port: sandboxPort,
    child,
    stop: stopper(child),
    tickParty: preloaded.party,
    lastOffset: preloaded.last,
  };
}

interface SpawnOptions {
  stdio: ("ignore" | "pipe" | "inherit")[];
  /** Under the hard limit of open files (10,000 sockets need more than the usual soft 1024). */
  raiseFdLimit?: boolean;
  /**
   * A `taskset -c` CPU list (`0-3`, `8,9`) the process and all its threads are kept on, so that
   * processes measured together on a machine with cores to spare never share a core.
   */
  cpus?: string | undefined;
}

/**
 * `node ARGS`, as `bash -c 'ulimit -n …; exec taskset -c … node …'` where asked: every step
 * execs the next, so the pid is node's.
 */
function spawnNode(args: string[], options: SpawnOptions): ChildProcess {
  const { stdio, raiseFdLimit = false, cpus } = options;
  const command = [...(cpus === undefined ? [] : ["taskset", "-c", cpus]), process.execPath, ...args];
  if (!raiseFdLimit) return spawn(command[0] as string, command.slice(1), { stdio });
  const quoted = command.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return spawn("bash", ["-c", `ulimit -n "$(ulimit -Hn)" && exec ${quoted}`], { stdio });
}

export interface GatewayProcessOptions {
  /** server.workers; "default" (the default): the flag left out, the gateway's choice for users. */
  workers?: number | "default";
  raiseFdLimit?: boolean;
  /** A `taskset -c` CPU list for the gateway (see SpawnOptions.cpus). */
  cpus?: string;
  /** Node options before the entry point (`--cpu-prof --cpu-prof-dir DIR` to profile it). */
  nodeArgs?: string[];
}

export interface RunningGateway extends Running {
  /** Worker threads, as its start-up line says (1 where it names none: one thread). */
  readonly workers: number;
}

/** The gateway in front of a ledger; resolves with its HTTP port (from its start-up log line). */
export async function startGatewayProcess(
  ledgerPort: number,
  args: string[],
  options: GatewayProcessOptions = {},
): Promise<RunningGateway> {
  const workers = options.workers ?? "default";
  const child = spawnNode(
    [
      ...(options.nodeArgs ?? []),
      ...entry("src/cli"),
      "--ledger",
      `127.0.0.1:${ledgerPort}`,
      "--port",
      "0",
      ...(workers === "default" ? [] : ["--server.workers", String(workers)]),
      ...args,
    ],
    { stdio: ["ignore", "pipe", "inherit"], raiseFdLimit: options.raiseFdLimit ?? false, cpus: options.cpus },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const logged = JSON.parse(line) as { msg?: string; port?: number; workers?: number };
    if (logged.msg === "gateway listening" && typeof logged.port === "number") {
      // Keep draining stdout so the gateway never blocks on a full pipe.
      lines.on("line", () => undefined);
      return { port: logged.port, child, stop: stopper(child), workers: logged.workers ?? 1 };
    }
  }
  throw new Error("the gateway exited before listening");
}

/** The load client process (bench/lib/bench-client.ts): one JSON job line in, JSON lines out. */
export interface BenchClient {
  readonly child: ChildProcess;
  send(line: object | string): void;
  /** The next JSON line the client writes. */
  next<T>(): Promise<T>;
  stop(): Promise<void>;
}

/** `script`: another client of the same protocol (bench/lib/flood-client for the fairness flood). */
export function startBenchClient(
  raiseFdLimit = true,
  script = "bench/lib/bench-client",
  /** A `taskset -c` CPU list for the client (see SpawnOptions.cpus). */
  cpus?: string,
): BenchClient {
  const child = spawnNode(entry(script), { stdio: ["pipe", "pipe", "inherit"], raiseFdLimit, cpus });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`the bench client exited with code ${code}`))),
  );
  exited.catch(() => undefined);
  return {
    child,
    send: (line) => child.stdin?.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`),
    next: <T>() => {
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(JSON.parse(queued) as T);
      return Promise.race([
        new Promise<T>((resolve) => waiting.push((line) => resolve(JSON.parse(line) as T))),
        exited,
      ]);
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      await once(child, "exit");
    },
  };
}
