import { pino } from "pino";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { type RunningSandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/sandbox.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";
import { gatewayMetric } from "./gateway-metric.js";
import { IN_PROCESS_GATEWAY } from "./in-process-gateway.js";
import { type NettyLedger, type NettyLedgerOptions, startNettyLedger } from "./netty-ledger.js";
import { tokenFor } from "./tokens.js";

/**
 * The gateway in this process in front of grpc-java on Netty (configured as Canton's Ledger API)
 * in front of an in-process sandbox: HTTP/WebSocket client -> gateway -> [fault proxy ->] Netty
 * -> sandbox.
 */
export interface NettyStack {
  /** Base URL of the gateway. */
  readonly url: string;
  readonly gateway: RunningGateway;
  readonly netty: NettyLedger;
  /** The fault proxy between the gateway and Netty, where asked for (`faultProxy: true`). */
  readonly front: FaultProxy | undefined;
  /** A second gateway straight on the sandbox, where asked for (`direct: true`): the ledger without Netty. */
  readonly direct: RunningGateway | undefined;
  readonly sandbox: RunningSandbox;
  /** The owner of the preloaded ticks (an `actAs-<party>` token acts as it). */
  readonly party: string;
  /** fetch against the gateway with an admin token unless `token` is given (null: none). */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** Creates one `Bench:Tick` of `party` through the gateway; resolves with its offset. */
  createTick(seq: number): Promise<number>;
  stop(): Promise<void>;
}

export interface NettyStackOptions {
  /** Netty's options, Canton's defaults where absent. */
  netty?: Omit<NettyLedgerOptions, "backendPort" | "backendHost">;
  /** `Bench:Tick`s preloaded for `party` (default 5). */
  ticks?: number;
  /** A fault proxy between the gateway and Netty (`front`). */
  faultProxy?: boolean;
  /** A second gateway straight on the sandbox (`direct`). */
  direct?: boolean;
  /** Gateway CLI flags. */
  gatewayArgs?: string[];
  sandbox?: Omit<SandboxOptions, "port" | "preload">;
}

export async function startNettyStack(options: NettyStackOptions = {}): Promise<NettyStack> {
  const sandbox = await startSandbox({
    ...options.sandbox,
    port: 0,
    preload: { ticks: options.ticks ?? 5, party: "netty" },
  });
  let netty: NettyLedger | undefined;
  let front: FaultProxy | undefined;
  let direct: RunningGateway | undefined;
  try {
    netty = await startNettyLedger({ ...options.netty, backendPort: sandbox.port });
    if (options.faultProxy) front = await startFaultProxy({ targetPort: netty.port });
    const gateway = await startGateway(
      loadConfig({ argv: ["--port", "0", ...(options.gatewayArgs ?? [])], env: {} }),
      { host: "127.0.0.1", port: front?.port ?? netty.port },
      pino({ level: "silent" }),
      IN_PROCESS_GATEWAY,
    );
    if (options.direct) {
      direct = await startGateway(
        loadConfig({ argv: ["--port", "0"], env: {} }),
        { host: "127.0.0.1", port: sandbox.port },
        pino({ level: "silent" }),
        IN_PROCESS_GATEWAY,
      );
    }
    const url = `http://127.0.0.1:${gateway.port}`;
    const party = sandbox.preloaded?.party as string;
    const running = netty;
    const request: NettyStack["request"] = (path, init = {}) => {
      const headers = new Headers(init.headers);
      const bearer = init.token === undefined ? tokenFor() : init.token;
      if (bearer !== null) headers.set("authorization", `Bearer ${bearer}`);
      return fetch(`${url}${path}`, { ...init, headers });
    };
    return {
      url,
      gateway,
      netty,
      front,
      direct,
      sandbox,
      party,
      request,
      async createTick(seq) {
        const res = await request("/v2/commands/submit-and-wait", {
          method: "POST",
          body: JSON.stringify(tickCommands(`netty-tick-${seq}-${Date.now()}`, party, seq)),
          token: tokenFor(`actAs-${party}`),
        });
        const body = (await res.json()) as { completionOffset?: number };
        if (res.status !== 200 || body.completionOffset === undefined)
          throw new Error(`tick ${seq}: ${res.status} ${JSON.stringify(body)}`);
        return body.completionOffset;
      },
      async stop() {
        await direct?.stop(1_000);
        await gateway.stop(1_000);
        await front?.close();
        await running.stop();
        await sandbox.stop();
      },
    };
  } catch (error) {
    await direct?.stop(1_000);
    await front?.close();
    await netty?.stop();
    await sandbox.stop();
    throw error;
  }
}

/**
 * A Ledger API token of `bytes` characters (or one or two more) for `user`, padded with a claim
 * the ledger ignores: valid wherever its size is not the problem, so only its size decides what
 * happens to a request that carries it.
 */
export function paddedToken(bytes: number, user = "participant_admin"): string {
  const bare = tokenFor(user, { pad: "" }).length;
  // base64url turns 3 bytes of the payload into 4 characters.
  let pad = Math.max(0, Math.floor(((bytes - bare) * 3) / 4));
  let token = tokenFor(user, { pad: "x".repeat(pad) });
  while (token.length < bytes) token = tokenFor(user, { pad: "x".repeat(++pad) });
  return token;
}

/** The gateway's /v2/updates streams reopened because the ledger closed their connection (GOAWAY). */
export function goawayResumes(stack: NettyStack): Promise<number> {
  return gatewayMetric(
    stack.url,
    "ledger_gateway_stream_resumes_total",
    'endpoint="/v2/updates"',
    'cause="goaway"',
  );
}
