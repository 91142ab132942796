import { type Logger, pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway.js";
import { type RunningSandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/sandbox.js";
import { IN_PROCESS_GATEWAY } from "./in-process-gateway.js";
import { tokenFor } from "./tokens.js";

export interface Stack {
  /** Base URL of the gateway, path prefix included. */
  url: string;
  gateway: RunningGateway;
  /** The in-process sandbox, for tests that look at what reached the ledger (`calls`). */
  sandbox: RunningSandbox;
  sandboxPort: number;
  token: string;
  /** fetch against the gateway with the admin token unless `token: null`. */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  stop(): Promise<void>;
}

/** How a test sets up the stack's auth and logs (default: unsafe sandbox, silent logs). */
export interface StackOptions {
  /** Sandbox options such as `auth` (token verification) and `log`. */
  sandbox?: Omit<SandboxOptions, "port">;
  gatewayLog?: Logger;
}

/**
 * The real stack on ephemeral ports: HTTP client -> uWS gateway -> gRPC -> sandbox.
 * `args` are gateway CLI flags (e.g. `--server.path-prefix /api`).
 */
export async function startStack(
  args: string[] = [],
  options: GatewayOptions = {},
  stackOptions: StackOptions = {},
): Promise<Stack> {
  const sandbox = await startSandbox({ ...stackOptions.sandbox, port: 0 });
  const config = loadConfig({ argv: ["--port", "0", ...args], env: {} });
  const gateway = await startGateway(
    config,
    { host: "127.0.0.1", port: sandbox.port },
    stackOptions.gatewayLog ?? pino({ level: "silent" }),
    { ...IN_PROCESS_GATEWAY, ...options },
  );
  const url = `http://127.0.0.1:${gateway.port}${config.server.pathPrefix}`;
  const token = tokenFor();
  return {
    url,
    gateway,
    sandbox,
    sandboxPort: sandbox.port,
    token,
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      const bearer = init.token === undefined ? token : init.token;
      if (bearer !== null) headers.set("authorization", `Bearer ${bearer}`);
      return fetch(`${url}${path}`, { ...init, headers });
    },
    async stop() {
      await gateway.stop(1_000);
      await sandbox.stop();
    },
  };
}

/** POST/PATCH helper: JSON body, no Content-Type (as Canton's TypeScript client sends). */
export function jsonBody(method: string, body: unknown): RequestInit {
  return { method, body: JSON.stringify(body) };
}
