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
): Promise<RunningSandbox> {
  const args = [
    "--port",
    "0",
    "--log-level",
    "warn",
    "--preload",
    `ticks=${ticks},payloadBytes=${payloadBytes},party=bench,perTransaction=${perTransaction}`,
  ];
  const child = spawn(process.execPath, [...entry("src/sandbox/main"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
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

/** The gateway in front of a ledger; resolves with its HTTP port (from its start-up log line). */
export async function startGatewayProcess(ledgerPort: number, args: string[]): Promise<Running> {
  const child = spawn(
    process.execPath,
    [...entry("src/cli"), "--ledger", `127.0.0.1:${ledgerPort}`, "--port", "0", ...args],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const logged = JSON.parse(line) as { msg?: string; port?: number };
    if (logged.msg === "gateway listening" && typeof logged.port === "number") {
      // Keep draining stdout so the gateway never blocks on a full pipe.
      lines.on("line", () => undefined);
      return { port: logged.port, child, stop: stopper(child) };
    }
  }
  throw new Error("the gateway exited before listening");
}
