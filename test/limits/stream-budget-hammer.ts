import { parentPort } from "node:worker_threads";
import { LedgerStreamBudget } from "../../src/limits/ledger-stream-budget.js";
import { moduleWorkerData } from "../../src/threads/module-worker.js";
import { workerAnswer } from "../support/worker-answer.js";

/**
 * A worker thread that contends for a shared stream budget: `claims` claims at once, each held
 * for a few turns of the event loop and then given back. Next to the budget's own counter, a
 * word of `inUse` counts the slots held by every thread, as their holders see them, and another
 * keeps the most ever seen: the budget is kept when that never passes `limit`.
 */
interface HammerData {
  buffer: SharedArrayBuffer;
  /** [in use, most in use seen] */
  inUse: SharedArrayBuffer;
  limit: number;
  claims: number;
}

export interface HammerResult {
  granted: number;
  refused: number;
}

const MARK = "streamBudgetHammerWorker";

/** Runs one contending worker; resolves with what its claims got. */
export function hammerBudget(data: HammerData): Promise<HammerResult> {
  return workerAnswer(import.meta.url, MARK, data);
}

const data = moduleWorkerData<HammerData>(MARK);
if (data !== undefined) {
  const budget = new LedgerStreamBudget(data.buffer, {
    limit: data.limit,
    queueLimit: 1_000_000,
    queueTimeoutMs: 600_000,
  });
  const inUse = new Int32Array(data.inUse);
  const result: HammerResult = { granted: 0, refused: 0 };
  const claims = Array.from(
    { length: data.claims },
    (_, i) =>
      new Promise<void>((done) => {
        const end = budget.claim(
          () => {
            result.granted++;
            const now = Atomics.add(inUse, 0, 1) + 1;
            for (let max = Atomics.load(inUse, 1); now > max; max = Atomics.load(inUse, 1))
              Atomics.compareExchange(inUse, 1, max, now);
            // Held over a few turns, so that the other threads find the budget full.
            let turns = 1 + (i % 3);
            const hold = () => {
              if (--turns > 0) return void setImmediate(hold);
              Atomics.sub(inUse, 0, 1);
              end();
              done();
            };
            setImmediate(hold);
          },
          () => {
            result.refused++;
            done();
          },
        );
      }),
  );
  void Promise.all(claims).then(() => parentPort?.postMessage(result));
}
