import { type Logger, pino } from "pino";

/**
 * The gateway's one logger configuration: JSON lines on stdout, tagged with the service and, when
 * server.workers > 1, the thread that wrote them (`worker`: 1..N, or `main`). Written
 * synchronously: pino's default buffers lines and writes them in the background, and on exit the
 * buffer is flushed at once while an earlier write may still be on its way, so the last lines of a
 * shutdown could come out of order (and those of several threads, out of the order they
 * happened in). The gateway logs events, not requests: a write per line costs nothing that counts.
 */
export function gatewayLogger(level: string, worker?: number | "main"): Logger {
  return pino(
    { level, base: { service: "ledger-json-gateway", ...(worker !== undefined ? { worker } : {}) } },
    pino.destination({ dest: 1, sync: true }),
  );
}
