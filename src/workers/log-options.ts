import type { LoggerOptions } from "pino";

/**
 * The gateway's one pino configuration: JSON lines on stdout, tagged with the service and, when
 * server.workers > 1, the thread that wrote them (`worker`: 1..N, or `main`).
 */
export function gatewayLogOptions(level: string, worker?: number | "main"): LoggerOptions {
  return {
    level,
    base: { service: "ledger-json-gateway", ...(worker !== undefined ? { worker } : {}) },
  };
}
