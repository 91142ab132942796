import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { pino } from "pino";
import { type RunningSandbox, startSandbox } from "./sandbox.js";

/** What crosses the thread boundary: only cloneable options (no logger, no authenticator). */
export interface SandboxWorkerOptions {
  port?: number;
  host?: string;
  participantName?: string;
  /** pino level for the worker's own logger; silent by default. */
  logLevel?: string;
}

/** Marks our own worker, so importing this module in any other worker starts nothing. */
const WORKER_MARK = "ledgerJsonGatewaySandbox";

type WorkerMessage =
  | { type: "started"; port: number }
  | { type: "failed"; message: string }
  | { type: "stopped" };

/**
 * Runs the sandbox in a worker thread, so `--ledger embedded` keeps its gRPC work off the
 * gateway's event loop. The worker is this same file: `.ts` under tsx (the worker inherits
 * `--import tsx` through process.execArgv), `.js` when compiled to dist/.
 */
export async function startSandboxWorker(
  options: SandboxWorkerOptions = {},
): Promise<{ port: number; stop(): Promise<void> }> {
  // execArgv is inherited by default, which carries `--import tsx` into the worker.
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { [WORKER_MARK]: true, options } });
  const port = await new Promise<number>((resolve, reject) => {
    const onMessage = (message: WorkerMessage) => {
      if (message.type === "started") resolve(message.port);
      if (message.type === "failed") reject(new Error(`sandbox worker failed to start: ${message.message}`));
    };
    worker.on("message", onMessage);
    worker.once("error", reject);
    worker.once("exit", (code) =>
      reject(new Error(`sandbox worker exited with code ${code} before starting`)),
    );
  });
  return {
    port,
    stop: async () => {
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.postMessage({ type: "stop" });
      await exited;
    },
  };
}

async function runInWorker(options: SandboxWorkerOptions): Promise<void> {
  const port = parentPort!;
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({ ...options, log: pino({ level: options.logLevel ?? "silent" }) });
  } catch (error) {
    port.postMessage({ type: "failed", message: String(error) } satisfies WorkerMessage);
    return;
  }
  port.on("message", (message: { type: string }) => {
    if (message.type !== "stop") return;
    void sandbox.stop().then(() => {
      port.postMessage({ type: "stopped" } satisfies WorkerMessage);
      port.close();
    });
  });
  port.postMessage({ type: "started", port: sandbox.port } satisfies WorkerMessage);
}

const data = workerData as { [WORKER_MARK]?: boolean; options?: SandboxWorkerOptions } | null;
if (!isMainThread && parentPort !== null && data?.[WORKER_MARK] === true)
  void runInWorker(data.options ?? {});
