import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

/**
 * Modules that run themselves in worker threads (the embedded sandbox, the gateway's workers):
 * the parent starts a worker on the module's own URL; the module, loaded in that worker, finds
 * its data with `moduleWorkerData` and runs. The mark tells a module's own workers from any
 * other thread that happens to import it, where it must start nothing.
 *
 * @example
 * const worker = startModuleWorker(import.meta.url, MARK, { id: 1 });
 * // at the module's end:
 * const data = moduleWorkerData<{ id: number }>(MARK);
 * if (data !== undefined) void runInWorker(data);
 */
export function startModuleWorker(moduleUrl: string, mark: string, data: unknown): Worker {
  return new Worker(bootstrap(moduleUrl), { eval: true, workerData: { [mark]: true, data } });
}

/** The data this thread was started with by `startModuleWorker(…, mark, …)`; undefined elsewhere. */
export function moduleWorkerData<Data>(mark: string): Data | undefined {
  const given = workerData as { [mark: string]: unknown; data?: Data } | null;
  if (isMainThread || parentPort === null || given?.[mark] !== true) return undefined;
  return given.data;
}

/**
 * The worker's entry code: an import of the module. Under tsx the module is `.ts`, and on Node 20
 * the `--import tsx` a worker inherits does not install tsx's loader hooks in the worker, so the
 * bootstrap registers them itself first (tsx is a dev dependency: only the `.ts` path needs it;
 * compiled `.js` loads directly).
 */
function bootstrap(moduleUrl: string): string {
  const load = `import(${JSON.stringify(moduleUrl)})`;
  if (!moduleUrl.endsWith(".ts")) return `${load};`;
  const tsxApi = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  return `import(${tsxApi}).then(({ register }) => { register(); return ${load}; });`;
}
