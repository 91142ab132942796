import { parentPort, type Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { GatewayConfig } from "../config/gateway-config.js";
import {
  drainBoundMs,
  type LedgerAddress,
  ListenError,
  type RunningGateway,
  startGateway,
} from "../gateway.js";
import { clientQuotaBuffer } from "../limits/client-quotas.js";
import { ledgerStreamBudgetBuffer } from "../limits/ledger-stream-budget.js";
import type { ExpositionFormat } from "../metrics/exposition-format.js";
import { addProcessMetrics } from "../metrics/gateway-metrics.js";
import { mergedWorkerExposition, type WorkerMetricsJson } from "../metrics/worker-metrics.js";
import { servedApiVersionBuffer } from "../proto/served-api-version.js";
import { moduleWorkerData, startModuleWorker } from "../threads/module-worker.js";
import { gatewayLogger } from "./gateway-logger.js";

/**
 * server.workers > 1: N uWS apps in worker threads on one port (SO_REUSEPORT among our own
 * threads, the kernel spreading connections), each a whole gateway of its own: its gRPC channel,
 * package cache, metrics registry, stream registry. The main thread holds the port before they
 * start (holdGatewayPort, which keeps other processes out), relays /metrics scrapes, and drains
 * them all on shutdown. The workers run this same file, found by import.meta.url.
 */
export interface GatewayWorkersOptions {
  readonly count: number;
  /** server.port is replaced by `port`: the one the main thread holds. */
  readonly config: GatewayConfig;
  readonly port: number;
  readonly ledgerAddress: LedgerAddress;
  readonly log: Logger;
}

export interface RunningGatewayWorkers {
  readonly port: number;
  /** Every worker's /readyz answers 503 from now on (RunningGateway.enterLameDuck). */
  enterLameDuck(): void;
  /**
   * Drains every worker (as RunningGateway.stop does, up to `drainMs`, by default the request
   * timeout and a second) and waits for their threads to end.
   */
  stop(drainMs?: number): Promise<void>;
  /** Resolves when a worker thread ends on its own (a crash): the gateway is then incomplete. */
  readonly failed: Promise<Error>;
}

/** Marks our own workers, so importing this module in any other worker starts nothing. */
const WORKER_MARK = "ledgerJsonGatewayWorker";

interface WorkerData {
  id: number;
  config: GatewayConfig;
  ledgerAddress: LedgerAddress;
  /** The caps' table (limits.*), one for all workers: shared memory, not a copy. */
  quotaBuffer: SharedArrayBuffer | undefined;
  /** The participant's stream budget (limits.ledger-streams), one for all workers, as the caps' table. */
  ledgerStreamBuffer: SharedArrayBuffer;
  /** The Canton release served, one for all workers: no two of them serve different APIs. */
  apiVersionBuffer: SharedArrayBuffer;
}

/** Worker -> main. */
type FromWorker =
  | { type: "listening"; port: number }
  | {
      type: "failed";
      message: string;
      listen?: { address: string; port: number; reason: string; code?: string };
    }
  /** `format`: what the scraper's Accept asked for. */
  | { type: "scrape"; id: number; format: ExpositionFormat }
  | { type: "collected"; id: number; metrics: WorkerMetricsJson | undefined }
  | { type: "stopped" };

/** Main -> worker. */
type ToWorker =
  | { type: "collect"; id: number }
  | { type: "scraped"; id: number; text?: string; contentType?: string; error?: string }
  | { type: "lame-duck" }
  | { type: "stop"; drainMs: number };

const SCRAPE_TIMEOUT_MS = 5_000;
const EXIT_TIMEOUT_MS = 10_000;

export async function startGatewayWorkers(options: GatewayWorkersOptions): Promise<RunningGatewayWorkers> {
  const config: GatewayConfig = {
    ...options.config,
    server: { ...options.config.server, port: options.port },
  };
  const processRegistry = new Registry();
  if (config.metrics.enabled) addProcessMetrics(processRegistry);
  const quotaBuffer = clientQuotaBuffer(config.quotas);
  const ledgerStreamBuffer = ledgerStreamBudgetBuffer(config.ledgerStreams);
  const apiVersionBuffer = servedApiVersionBuffer();
  const workers = Array.from({ length: options.count }, (_, i) => {
    const data: WorkerData = {
      id: i + 1,
      config,
      ledgerAddress: options.ledgerAddress,
      quotaBuffer,
      ledgerStreamBuffer,
      apiVersionBuffer,
    };
    return startModuleWorker(import.meta.url, WORKER_MARK, data);
  });
  const send = (worker: Worker, message: ToWorker) => worker.postMessage(message);
  const exits = workers.map((worker) => new Promise<void>((resolve) => worker.once("exit", () => resolve())));

  // A scrape served by any worker: every worker's registry, merged here.
  let nextCollect = 0;
  const collecting = new Map<
    number,
    { results: (WorkerMetricsJson | undefined)[]; left: number; done: () => void }
  >();
  // What each worker said at its last answered scrape: summed for it while it does not answer.
  const lastAnswers: (WorkerMetricsJson | undefined)[] = new Array(workers.length);
  const scrape = async (requester: Worker, scrapeId: number, format: ExpositionFormat) => {
    const id = nextCollect++;
    const results: (WorkerMetricsJson | undefined)[] = new Array(workers.length);
    // A worker that does not answer in time is reported down, not the whole scrape failed.
    const all = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SCRAPE_TIMEOUT_MS);
      collecting.set(id, {
        results,
        left: workers.length,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
    for (const worker of workers) send(worker, { type: "collect", id });
    try {
      await all;
      const stale = new Set<number>();
      const answers = workers.map((_, i) => {
        const answer = results[i];
        if (answer !== undefined) lastAnswers[i] = answer;
        else stale.add(i);
        return answer ?? lastAnswers[i];
      });
      const { text, contentType } = await mergedWorkerExposition(answers, processRegistry, format, stale);
      send(requester, { type: "scraped", id: scrapeId, text, contentType });
    } catch (error) {
      send(requester, { type: "scraped", id: scrapeId, error: String(error) });
    } finally {
      collecting.delete(id);
    }
  };

  let stopping = false;
  let onFailure: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    onFailure = resolve;
  });
  const listening = workers.map(
    (worker, i) =>
      new Promise<void>((resolve, reject) => {
        worker.on("message", (message: FromWorker) => {
          switch (message.type) {
            case "listening":
              resolve();
              break;
            case "failed":
              reject(
                message.listen
                  ? new ListenError(
                      message.listen.address,
                      message.listen.port,
                      message.listen.reason,
                      message.listen.code,
                    )
                  : new Error(`gateway worker ${i + 1} failed to start: ${message.message}`),
              );
              break;
            case "scrape":
              void scrape(worker, message.id, message.format);
              break;
            case "collected": {
              const pending = collecting.get(message.id);
              if (!pending) break;
              pending.results[i] = message.metrics;
              if (--pending.left === 0) pending.done();
              break;
            }
          }
        });
        worker.once("error", (error) => {
          reject(error);
          if (!stopping) onFailure(error);
        });
        worker.once("exit", (code) => {
          const error = new Error(`gateway worker ${i + 1} exited with code ${code}`);
          reject(error);
          if (!stopping) onFailure(error);
        });
      }),
  );

  const stop = async (drainMs = drainBoundMs(config)) => {
    stopping = true;
    await Promise.all(
      workers.map(async (worker, i) => {
        send(worker, { type: "stop", drainMs });
        const timer = setTimeout(() => void worker.terminate(), drainMs + EXIT_TIMEOUT_MS);
        await exits[i];
        clearTimeout(timer);
      }),
    );
  };

  try {
    await Promise.all(listening);
  } catch (error) {
    await stop(0);
    throw error;
  }
  options.log.debug({ workers: workers.length }, "gateway workers listening");
  return {
    port: options.port,
    enterLameDuck() {
      for (const worker of workers) send(worker, { type: "lame-duck" });
    },
    stop,
    failed,
  };
}

async function runInWorker(data: WorkerData): Promise<void> {
  const port = parentPort!;
  const post = (message: FromWorker) => port.postMessage(message);
  const log = gatewayLogger(data.config.log.level, data.id);
  let nextScrape = 0;
  const scrapes = new Map<number, (message: Extract<ToWorker, { type: "scraped" }>) => void>();
  let gateway: RunningGateway | undefined;
  port.on("message", (message: ToWorker) => {
    switch (message.type) {
      case "collect":
        void (gateway?.metrics?.snapshot() ?? Promise.resolve(undefined)).then(
          (metrics) => post({ type: "collected", id: message.id, metrics }),
          () => post({ type: "collected", id: message.id, metrics: undefined }),
        );
        break;
      case "scraped":
        scrapes.get(message.id)?.(message);
        scrapes.delete(message.id);
        break;
      case "lame-duck":
        gateway?.enterLameDuck();
        break;
      case "stop":
        void (gateway?.stop(message.drainMs) ?? Promise.resolve()).then(() => {
          post({ type: "stopped" });
          port.close();
        });
        break;
    }
  });
  try {
    gateway = await startGateway(data.config, data.ledgerAddress, log, {
      listen: "shared",
      worker: data.id,
      ...(data.quotaBuffer === undefined ? {} : { quotaBuffer: data.quotaBuffer }),
      ledgerStreamBuffer: data.ledgerStreamBuffer,
      apiVersionBuffer: data.apiVersionBuffer,
      processMetrics: false,
      // The metrics route passes the scraper's format (GatewayOptions declares the hook without it).
      metricsExposition: (format: ExpositionFormat = "prometheus") =>
        new Promise((resolve, reject) => {
          const id = nextScrape++;
          scrapes.set(id, (answer) =>
            answer.text !== undefined && answer.contentType !== undefined
              ? resolve({ text: answer.text, contentType: answer.contentType })
              : reject(new Error(answer.error ?? "metrics scrape failed")),
          );
          post({ type: "scrape", id, format });
        }),
    });
  } catch (error) {
    post(
      error instanceof ListenError
        ? {
            type: "failed",
            message: error.message,
            listen: {
              address: error.address,
              port: error.port,
              reason: error.reason,
              ...(error.code !== undefined ? { code: error.code } : {}),
            },
          }
        : {
            type: "failed",
            message: error instanceof Error ? (error.stack ?? error.message) : String(error),
          },
    );
    port.close();
    return;
  }
  post({ type: "listening", port: gateway.port });
}

const data = moduleWorkerData<WorkerData>(WORKER_MARK);
if (data !== undefined) void runInWorker(data);
