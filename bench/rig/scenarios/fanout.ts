import { processCpuSeconds, processRssBytes } from "../../lib/proc-stats.js";
import type { BenchClient } from "../../lib/processes.js";
import { round, secondsSince } from "../../lib/stats.js";

/**
 * The wave-2 scenarios, each with its clients in the bench client process and the gateway's
 * CPU and memory read from /proc: N identical WebSocket subscribers of one update range
 * (deliveries/s, gateway CPU per delivery, upstream calls), 10,000 idle WebSockets (resident
 * memory per connection), and CPU-bound bounded update streams against 1 or more workers.
 */
export interface GatewayUnderTest {
  port: number;
  pid: number;
  token: string;
  /** The gateway's /metrics text. */
  metrics(): Promise<string>;
}

export interface FanoutPoint {
  subscribers: number;
  /**
   * `--fanout-replay`: the subscribers read the whole preloaded ledger from offset 0, their
   * requests sent together (issue 23's replay crowd: dashboards restarting).
   */
  replay?: boolean;
  elementsPerSubscriber: number;
  deliveries: number;
  errors: number;
  seconds: number;
  deliveriesPerSecond: number;
  gatewayCpuSeconds: number;
  gatewayCpuMicrosPerDelivery: number;
  /**
   * Update streams the gateway opened on the ledger for the N subscribers: shared upstreams
   * plus own catch-up calls (the target: 1). Handovers and admission probes apart.
   */
  upstreamStreams: number;
  /** The shared call reopened on another member's token (its owner left), one after the other. */
  handovers: number;
  /**
   * Admission probes: one short empty-range GetUpdates call per subscriber that joins a running
   * shared stream, on its own token (the ledger judges every token), by design; not a stream.
   */
  admissionProbes: number;
  /** Own calls by cause (late_join, detach, rejoin) and detaches of slow members. */
  catchUps: Record<string, number>;
  detaches: number;
  /** Every GetUpdates call: upstream streams + handovers + admission probes (+ anything else). */
  getUpdatesCalls: number;
  firstOffsets: number[];
  lastOffsets: number[];
  /** With `deflate` (the subscribers offered permessage-deflate): what compression did and cost. */
  compression?: CompressionFigures;
}

interface CompressionFigures {
  /** Whether the gateway accepted the offer (websocket-config.compression on). */
  negotiated: boolean;
  /** Bytes the subscribers read off their TCP sockets per delivery, and the messages' own. */
  wireBytesPerDelivery: number;
  textBytesPerDelivery: number;
  /** Gateway RSS once the N sockets were open (before the stream) less before they opened, per socket. */
  rssPerConnectionBytes: number;
  /** Peak gateway RSS over the stream (sampled every 50 ms) less before the sockets opened. */
  peakRssGrowthBytes: number;
}

/** Updates after `begin`, to `end` when given; without it the stream is open-ended (shared). */
export const updatesRequest = (party: string, begin: number, end: number | undefined) => ({
  beginExclusive: begin,
  ...(end !== undefined && { endInclusive: end }),
  updateFormat: {
    includeTransactions: {
      eventFormat: {
        filtersByParty: {
          [party]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] },
        },
      },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  },
});

/**
 * Upstream calls counted at the gateway (the sandbox has no per-method call counter of its
 * own): every GetUpdates call from the count of its gRPC client-call histogram (a server stream
 * is counted when it ends), broken down by the fan-out's counters: shared upstreams (one close
 * each), handovers, own catch-up calls, admission probes.
 */
export const UPSTREAM_CALLS_SOURCE =
  "gateway metrics: upstream streams = sum(ledger_gateway_fanout_upstream_closes_total) + sum(ledger_gateway_fanout_catch_ups_total); " +
  "handovers = ledger_gateway_fanout_handovers_total; admission probes = sum(ledger_gateway_fanout_admissions_total); " +
  'GetUpdates calls = ledger_gateway_grpc_client_call_duration_seconds_count{method=~".*UpdateService/GetUpdates"}';

/** The /v2/updates counters the point reads, by series (name plus the label that varies). */
function counters(metrics: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of metrics.split("\n")) {
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    if (series.startsWith("ledger_gateway_grpc_client_call_duration_seconds_count{")) {
      if (series.includes("UpdateService/GetUpdates"))
        values.set("getUpdates", (values.get("getUpdates") ?? 0) + value);
    } else if (series.startsWith("ledger_gateway_fanout_") && series.includes('endpoint="/v2/updates"')) {
      const name = series.slice(0, series.indexOf("{"));
      const label = /(?:cause|reason|outcome)="([a-z_]+)"/.exec(series)?.[1];
      values.set(label ? `${name}:${label}` : name, value);
    }
  }
  return values;
}

function delta(after: Map<string, number>, before: Map<string, number>) {
  const of = (prefix: string) => {
    let sum = 0;
    for (const [series, value] of after)
      if (series === prefix || series.startsWith(`${prefix}:`)) sum += value - (before.get(series) ?? 0);
    return sum;
  };
  const catchUps: Record<string, number> = {};
  for (const cause of ["late_join", "detach", "rejoin"]) {
    const series = `ledger_gateway_fanout_catch_ups_total:${cause}`;
    catchUps[cause] = (after.get(series) ?? 0) - (before.get(series) ?? 0);
  }
  const shared = of("ledger_gateway_fanout_upstream_closes_total");
  const ownCalls = of("ledger_gateway_fanout_catch_ups_total");
  return {
    upstreamStreams: shared + ownCalls,
    handovers: of("ledger_gateway_fanout_handovers_total"),
    admissionProbes: of("ledger_gateway_fanout_admissions_total"),
    catchUps,
    detaches: of("ledger_gateway_fanout_detaches_total"),
    getUpdatesCalls: of("getUpdates"),
  };
}

/**
 * One point: N subscribers of the same open-ended request, spread over the client processes
 * given (10,000 sockets and their frames would make one process the bound, not the gateway).
 */
export async function fanoutPoint(
  clientOrClients: BenchClient | readonly BenchClient[],
  gateway: GatewayUnderTest,
  party: string,
  lastOffset: number,
  subscribers: number,
  elements: number,
  deflate?: boolean,
): Promise<FanoutPoint> {
  const rssBefore = deflate === undefined ? 0 : processRssBytes(gateway.pid);
  // Open-ended, as live subscribers ask (a bounded range is never shared): each client closes
  // its socket with 1000 once it has the element at `lastOffset`, the ledger's end.
  const request = updatesRequest(party, lastOffset - elements, undefined);
  const shares = sharesOf(subscribers, Array.isArray(clientOrClients) ? clientOrClients : [clientOrClients]);
  for (const [client, n] of shares) {
    client.send({
      kind: "subscribe",
      url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
      token: gateway.token,
      request,
      n,
      until: lastOffset,
      ...(deflate === undefined ? {} : { deflate }),
    });
  }
  await Promise.all(shares.map(([client]) => client.next<{ ready: number }>()));
  const rssOpen = deflate === undefined ? 0 : processRssBytes(gateway.pid);
  let rssPeak = rssOpen;
  const sampler =
    deflate === undefined
      ? undefined
      : setInterval(() => {
          rssPeak = Math.max(rssPeak, processRssBytes(gateway.pid));
        }, 50);
  const countsBefore = counters(await gateway.metrics());
  const cpuBefore = processCpuSeconds(gateway.pid);
  const started = process.hrtime.bigint();
  for (const [client] of shares) client.send("go");
  const result = sumOf(await Promise.all(shares.map(([client]) => client.next<SubscribeAnswer>())));
  const seconds = secondsSince(started);
  clearInterval(sampler);
  const cpu = processCpuSeconds(gateway.pid) - cpuBefore;
  // A stream's call is counted when it ends: give the last ones a moment to report.
  await new Promise((r) => setTimeout(r, 300));
  const counts = delta(counters(await gateway.metrics()), countsBefore);
  return {
    subscribers,
    elementsPerSubscriber: elements,
    deliveries: result.deliveries,
    errors: result.errors,
    seconds: round(seconds, 3),
    deliveriesPerSecond: Math.round(result.deliveries / seconds),
    gatewayCpuSeconds: round(cpu, 3),
    gatewayCpuMicrosPerDelivery: round((cpu * 1e6) / Math.max(1, result.deliveries), 3),
    ...counts,
    firstOffsets: result.firstOffsets,
    lastOffsets: result.lastOffsets,
    ...(deflate !== undefined && {
      compression: {
        negotiated: result.wireBytes < result.textBytes,
        wireBytesPerDelivery: Math.round(result.wireBytes / Math.max(1, result.deliveries)),
        textBytesPerDelivery: Math.round(result.textBytes / Math.max(1, result.deliveries)),
        rssPerConnectionBytes: Math.round((rssOpen - rssBefore) / subscribers),
        peakRssGrowthBytes: rssPeak - rssBefore,
      },
    }),
  };
}

/** What the bench client answers a subscribe job once all its sockets closed. */
interface SubscribeAnswer {
  deliveries: number;
  errors: number;
  textBytes: number;
  wireBytes: number;
  firstOffsets: number[];
  lastOffsets: number[];
}

/** `n` subscribers over the clients, as evenly as they go; a client with none is left out. */
const sharesOf = (n: number, clients: readonly BenchClient[]): [BenchClient, number][] =>
  clients
    .map((client, i): [BenchClient, number] => [
      client,
      Math.floor(n / clients.length) + (i < n % clients.length ? 1 : 0),
    ])
    .filter(([, share]) => share > 0);

const sumOf = (answers: SubscribeAnswer[]): SubscribeAnswer => ({
  deliveries: answers.reduce((sum, a) => sum + a.deliveries, 0),
  errors: answers.reduce((sum, a) => sum + a.errors, 0),
  textBytes: answers.reduce((sum, a) => sum + a.textBytes, 0),
  wireBytes: answers.reduce((sum, a) => sum + a.wireBytes, 0),
  // Each client names the distinct offsets its sockets began and ended at.
  firstOffsets: [...new Set(answers.flatMap((a) => a.firstOffsets))],
  lastOffsets: [...new Set(answers.flatMap((a) => a.lastOffsets))],
});

export interface IdleResult {
  connections: number;
  stillOpen: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  rssPerConnectionBytes: number;
}

export async function idleConnections(
  client: BenchClient,
  gateway: GatewayUnderTest,
  connections: number,
): Promise<IdleResult> {
  const url = `ws://127.0.0.1:${gateway.port}/v2/updates`;
  // A first round warms the paths (uWS, the upgrade's code) up, so that RSS grows by the sockets only.
  client.send({ kind: "idle", url, token: gateway.token, n: 200 });
  await client.next();
  client.send("close");
  await client.next();
  await new Promise((r) => setTimeout(r, 1000));
  const before = processRssBytes(gateway.pid);
  client.send({ kind: "idle", url, token: gateway.token, n: connections });
  await client.next();
  await new Promise((r) => setTimeout(r, 3000));
  const after = processRssBytes(gateway.pid);
  client.send("close");
  const closed = await client.next<{ stillOpenAtClose: number }>();
  return {
    connections,
    stillOpen: closed.stillOpenAtClose,
    rssBeforeBytes: before,
    rssAfterBytes: after,
    rssPerConnectionBytes: Math.round((after - before) / connections),
  };
}

export interface WorkersPoint {
  workers: number;
  /** Bounded WebSocket streams read to their end (the client's loops open one after another). */
  requests: number;
  failures: number;
  seconds: number;
  requestsPerSecond: number;
  /** Element frames received over the window, and per second: what the ratio compares. */
  frames?: number;
  framesPerSecond?: number;
  gatewayCpuSeconds: number;
  /** Where the machine's CPU went over the window (2 cores shared with other work). */
  sandboxCpuSeconds?: number;
  clientCpuSeconds?: number;
}

/**
 * CPU-bound streaming: `concurrency` loops each read the bounded update stream of `request`
 * over a WebSocket to its end, then again, for `seconds` (after a 2 s warm-up). Transactions of
 * several events make the gateway's transcoding most of the work: the sandbox serves bytes it
 * keeps encoded, and the client only counts frames.
 */
export async function streamLoad(
  client: BenchClient,
  gateway: GatewayUnderTest,
  workers: number,
  sandboxPid: number,
  request: unknown,
  concurrency: number,
  seconds: number,
): Promise<WorkersPoint> {
  const job = {
    kind: "streams",
    url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
    token: gateway.token,
    request,
    concurrency,
  };
  client.send({ ...job, seconds: 2 });
  await client.next();
  const clientPid = client.child.pid as number;
  const before = {
    gateway: processCpuSeconds(gateway.pid),
    sandbox: processCpuSeconds(sandboxPid),
    client: processCpuSeconds(clientPid),
  };
  client.send({ ...job, seconds });
  const result = await client.next<{ streams: number; frames: number; failures: number; seconds: number }>();
  return {
    workers,
    requests: result.streams,
    failures: result.failures,
    seconds: round(result.seconds, 3),
    requestsPerSecond: round(result.streams / result.seconds, 1),
    frames: result.frames,
    framesPerSecond: Math.round(result.frames / result.seconds),
    gatewayCpuSeconds: round(processCpuSeconds(gateway.pid) - before.gateway, 3),
    sandboxCpuSeconds: round(processCpuSeconds(sandboxPid) - before.sandbox, 3),
    clientCpuSeconds: round(processCpuSeconds(clientPid) - before.client, 3),
  };
}
