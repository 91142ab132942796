import { startModuleWorker } from "../../src/threads/module-worker.js";

/**
 * Starts the module at `moduleUrl` in a worker thread with `data` (see startModuleWorker) and
 * resolves with the first message it posts, its one answer; the worker is then ended.
 */
export function workerAnswer<Answer>(moduleUrl: string, mark: string, data: unknown): Promise<Answer> {
  const worker = startModuleWorker(moduleUrl, mark, data);
  return new Promise((resolve, reject) => {
    worker.once("message", (answer: Answer) => {
      resolve(answer);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}
