import { parentPort, type Worker } from "node:worker_threads";
import { pino } from "pino";
import type { TokenVerificationOptions } from "../jwt/token-verifier.js";
import type { ApiVersion } from "../proto/api-version.js";
import { moduleWorkerData, startModuleWorker } from "../threads/module-worker.js";
import { type RunningSandbox, startSandbox } from "./sandbox.js";

/** What crosses the thread boundary: only cloneable options (no logger, no authenticator). */
export interface SandboxWorkerOptions {
  /** The Canton release the sandbox speaks (SandboxOptions.apiVersion). */
  apiVersion?: ApiVersion;
  port?: number;
  host?: string;
  participantName?: string;
  /** pino level for the worker's own logger; silent by default. */
  logLevel?: string;
  /** Token verification (key material as text: files are read before the worker starts). */
  auth?: TokenVerificationOptions;
  /** See SandboxOptions; absent: Canton's one minute. */
  idleStreamOffsetCheckpointTimeoutMs?: number;
}

/** Marks our own worker, so importing this module in any other worker starts nothing. */
const WORKER_MARK = "ledgerJsonGatewaySandbox";

type WorkerMessage =
  | { type: "started"; port: number }
  | { type: "failed"; message: string }
  | { type: "stopped" };

/**
 * Runs the sandbox in a worker thread, so `--ledger embedded` keeps its gRPC work off the
 * gateway's event loop. The worker runs this same file, found by import.meta.url: `.ts` under
 * tsx (the worker inherits `--import tsx` through process.execArgv), `.js` compiled in dist/.
 */
export async function startSandboxWorker(
  options: SandboxWorkerOptions = {},
): Promise<{ port: number; stop(): Promise<void>; ended: Promise<Error> }> {
  const worker = startModuleWorker(import.meta.url, WORKER_MARK, options);
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
  let stopping = false;
  return {
    port,
    stop: async () => {
      stopping = true;
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.postMessage({ type: "stop" });
      await exited;
    },
    ended: unaskedEnd(worker, () => stopping),
  };
}

/**
 * Resolves when `worker` ends without having been asked to (`asked()` false then): a thrown
 * error, or an exit. A ledger thread that died leaves the gateway answering 503 for ever; whoever
 * started it must know, to stop the whole process.
 */
export function unaskedEnd(worker: Worker, asked: () => boolean): Promise<Error> {
  return new Promise<Error>((resolve) => {
    let error: Error | undefined;
    worker.once("error", (e) => {
      error = e;
    });
    worker.once("exit", (code) => {
      if (!asked()) resolve(error ?? new Error(`exited with code ${code}`));
    });
  });
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

const data = moduleWorkerData<SandboxWorkerOptions>(WORKER_MARK);
if (data !== undefined) void runInWorker(data);
