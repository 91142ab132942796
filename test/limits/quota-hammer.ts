import { parentPort } from "node:worker_threads";
import { SharedQuotas } from "../../src/limits/shared-quotas.js";
import { moduleWorkerData } from "../../src/threads/module-worker.js";
import { workerAnswer } from "../support/worker-answer.js";

/**
 * A worker thread that hammers one key of a shared quota table: `rounds` acquires (under
 * `limit`), each held ones released when `release` says so. It answers how many it was given.
 */
interface HammerData {
  buffer: SharedArrayBuffer;
  key: string;
  limit: number;
  rounds: number;
  release: boolean;
}

const MARK = "quotaHammerWorker";

/** Runs one hammering worker; resolves with the acquires it was given. */
export function hammer(data: HammerData): Promise<number> {
  return workerAnswer(import.meta.url, MARK, data);
}

const data = moduleWorkerData<HammerData>(MARK);
if (data !== undefined) {
  const quotas = new SharedQuotas(data.buffer);
  let granted = 0;
  for (let i = 0; i < data.rounds; i++) {
    if (quotas.acquire(data.key, data.limit) !== undefined) continue;
    granted++;
    // Another key's churn between, so that slots move under the other threads' probes.
    quotas.acquire(`${data.key}:${i % 7}`, 1_000_000);
    quotas.release(`${data.key}:${i % 7}`);
    if (data.release) quotas.release(data.key);
  }
  parentPort?.postMessage(granted);
}
