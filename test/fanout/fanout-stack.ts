import { pino } from "pino";
import WebSocket from "ws";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { IN_PROCESS_GATEWAY } from "../support/in-process-gateway.js";
import { tokenFor } from "../support/tokens.js";

/** Gateway + sandbox on ephemeral ports, with the sandbox at hand (its call counter). */
export interface FanoutStack {
  url: string;
  sandbox: RunningSandbox;
  gateway: RunningGateway;
  party: string;
  /** A token that may act as `party` (extra claims make distinct tokens of the same user). */
  token(extra?: Record<string, unknown>): string;
  ledgerEnd(): Promise<number>;
  /** Creates `Bench:Tick` contracts with these sequence numbers, one transaction each. */
  ticks(seqs: number[]): Promise<void>;
  /** Creates the next `n` ticks, numbered on from the stack's last one; answers their numbers. */
  more(n: number): Promise<number[]>;
  /** `ledger_gateway_fanout_joins_total` of an endpoint, joined `how` (direct or splice). */
  joins(endpoint: string, how: "direct" | "splice"): Promise<number>;
  metric(name: string, labels: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export async function startFanoutStack(
  args: string[] = [],
  preload?: { ticks: number; payloadBytes?: number },
): Promise<FanoutStack> {
  const sandbox = await startSandbox({
    port: 0,
    preload: { ticks: preload?.ticks ?? 0, payloadBytes: preload?.payloadBytes ?? 64, party: "fan" },
  });
  const config = loadConfig({ argv: ["--port", "0", ...args], env: {} });
  const gateway = await startGateway(
    config,
    { host: "127.0.0.1", port: sandbox.port },
    pino({ level: "silent" }),
    IN_PROCESS_GATEWAY,
  );
  const url = `http://127.0.0.1:${gateway.port}`;
  const party = sandbox.preloaded?.party ?? "";
  const token = (extra: Record<string, unknown> = {}) => tokenFor(`actAs-${party}`, extra);
  const request = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token()}` } });
  let lastSeq = 0;
  const stack: FanoutStack = {
    url,
    sandbox,
    gateway,
    party,
    token,
    async ledgerEnd() {
      return ((await (await request("/v2/state/ledger-end")).json()) as { offset: number }).offset;
    },
    async ticks(seqs) {
      for (const seq of seqs) {
        const res = await request("/v2/commands/submit-and-wait", {
          method: "POST",
          body: JSON.stringify({
            commandId: `tick-${seq}-${Math.random()}`,
            actAs: [party],
            commands: [
              {
                CreateCommand: {
                  templateId: "#gateway-samples:Bench:Tick",
                  createArguments: { owner: party, seq: String(seq), payload: "live" },
                },
              },
            ],
          }),
        });
        if (res.status !== 200) throw new Error(`tick ${seq}: ${res.status} ${await res.text()}`);
      }
    },
    async more(n) {
      const seqs = range(lastSeq + 1, lastSeq + n);
      lastSeq += n;
      await stack.ticks(seqs);
      return seqs;
    },
    joins(endpoint, how) {
      return stack.metric("ledger_gateway_fanout_joins_total", { endpoint, how });
    },
    metric(name, labels) {
      return gatewayMetric(url, name, ...Object.entries(labels).map(([k, v]) => `${k}="${v}"`));
    },
    async stop() {
      await gateway.stop(500);
      await sandbox.stop();
    },
  };
  return stack;
}

/** The ACS-delta update request of the stack's party from an offset. */
export function updatesFrom(party: string, beginExclusive: number): unknown {
  return {
    beginExclusive,
    updateFormat: {
      includeTransactions: {
        eventFormat: { filtersByParty: { [party]: {} } },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
}

/** One WebSocket subscriber that records tick sequence numbers and offsets. */
export class Subscriber {
  readonly seqs: number[] = [];
  readonly offsets: number[] = [];
  readonly socket: WebSocket;
  readonly closed: Promise<number>;
  #waiters: { count: number; resolve: () => void }[] = [];
  /** Pause the TCP socket for `pauseMs` after every `burst` frames (a slow reader); 0: never. */
  pauseMs = 0;
  burst = 10;

  constructor(stack: FanoutStack, request: unknown, token = stack.token(), path = "/v2/updates") {
    this.socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${path}`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    this.socket.on("open", () => this.socket.send(JSON.stringify(request)));
    this.socket.on("message", (data: Buffer) => this.#frame(JSON.parse(data.toString("utf8"))));
    this.closed = new Promise((resolve) => this.socket.on("close", (code) => resolve(code)));
  }

  #frame(frame: {
    update?: Record<
      string,
      { value: { offset: number; events?: { CreatedEvent: { createArgument: { seq: string } } }[] } }
    >;
  }) {
    const tx = frame.update?.Transaction?.value;
    if (tx === undefined) return;
    this.offsets.push(tx.offset);
    this.seqs.push(Number(tx.events?.[0]?.CreatedEvent.createArgument.seq));
    for (const waiter of [...this.#waiters]) {
      if (this.seqs.length >= waiter.count) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    if (this.pauseMs > 0 && this.seqs.length % this.burst === 0) {
      this.socket.pause();
      setTimeout(() => this.socket.resume(), this.pauseMs);
    }
  }

  /**
   * Stops reading the socket at all (the gateway's buffer for it fills) until `resume()`. ws's
   * own pause: pausing its TCP socket directly is undone by ws's flow control when its parser
   * drains.
   */
  stopReading(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Resolves once `count` transactions arrived; rejects if the socket closes first. */
  received(count: number): Promise<void> {
    if (this.seqs.length >= count) return Promise.resolve();
    return Promise.race([
      new Promise<void>((resolve) => this.#waiters.push({ count, resolve })),
      this.closed.then((code) => {
        throw new Error(`closed with ${code} after ${this.seqs.length} of ${count} transactions`);
      }),
    ]);
  }

  close(): Promise<number> {
    this.socket.close(1000);
    return this.closed;
  }
}

export { until } from "../support/until.js";

export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
