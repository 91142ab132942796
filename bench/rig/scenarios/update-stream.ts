import { DirectLedger, grpcUpdatesRequest } from "../../lib/grpc-direct.js";
import { BenchHttpClient } from "../../lib/http-client.js";
import { readNdjson } from "../../lib/ndjson-reader.js";
import { processCpuSeconds, processRssBytes } from "../../lib/proc-stats.js";
import { median, round, secondsSince } from "../../lib/stats.js";
import { readWebSocketStream } from "../../lib/ws-reader.js";
import { updatesRequest } from "./fanout.js";

/**
 * Update stream throughput over the same preloaded ledger, in one run: a direct gRPC client of
 * the sandbox, the gateway's WebSocket, and the gateway's HTTP list twin. Every transport reads
 * the whole range [0, end] as a client would (protobuf objects for gRPC, parsed JSON for the
 * gateway); runs are interleaved so that machine noise hits all of them alike. The WebSocket and
 * the list twin are read from one gateway (what a client of one gateway sees) or from a gateway
 * each (the request-cost scenario): a window read right after a 130 MB list-twin answer on the
 * same process also pays for that answer's garbage, which hides what the WebSocket costs.
 */
export interface UpdateStreamResult {
  events: number;
  runs: number;
  eventsPerSecond: {
    directGrpc: number;
    gatewayWebSocket: number;
    gatewayHttpList: number;
    /** The list twin streamed (`Accept: application/x-ndjson`), each line parsed as it arrives. */
    gatewayNdjson?: number;
  };
  ratioToDirect: { gatewayWebSocket: number; gatewayHttpList: number; gatewayNdjson?: number };
  /** Median over the counted runs of the ms from the NDJSON request to its first element parsed. */
  ndjsonFirstElementMs?: number;
  /**
   * Peak resident memory of the WebSocket's gateway over its WebSocket runs: with the list-twin
   * answers before them when one gateway serves both, without them when each has its own.
   */
  gatewayPeakRssBytes: number;
  /** Peak resident memory during the first WebSocket stream of a fresh gateway: what streaming costs. */
  gatewayFirstWebSocketRssBytes: number;
  /** When asked for (`cost`): the gateways' CPU per element and what one list-twin answer costs in memory. */
  gatewayCost?: GatewayStreamCost;
}

interface GatewayStreamCost {
  /**
   * Median over the counted runs of the gateway's CPU over one read / elements read; each window
   * holds one read of its transport, from the start of its request to the last element parsed.
   */
  cpuMicrosPerElement: { webSocket: number; httpList: number; ndjson?: number };
  cpuMicrosPerEvent: { webSocket: number; httpList: number; ndjson?: number };
  /** Elements (updates) of one read, and the bytes of one list-twin answer. */
  elements: number;
  listAnswerBytes: number;
  /**
   * Peak resident memory while answering the list twin (sampled every 20 ms), and before it: its
   * gateway's first answer (after a WebSocket warm-up when one gateway serves both).
   */
  listPeakRssBytes: number;
  listRssBeforeBytes: number;
}

/** A gateway process the bench reads: its HTTP port, and its pid for its CPU and memory in /proc. */
export interface GatewayProcess {
  port: number;
  pid: number;
}

export interface UpdateStreamSetup {
  sandboxPort: number;
  /** The gateways read over their WebSocket, list twin and NDJSON: the same or one each. */
  webSocketGateway: GatewayProcess;
  listGateway: GatewayProcess;
  ndjsonGateway: GatewayProcess;
  party: string;
  lastOffset: number;
  token: string;
  runs: number;
  /** Whether to report the gateways' CPU per element and the list twin's memory (gatewayCost). */
  cost?: boolean;
  /** Called with one line per measured pass (warm-up included), as the bench runs. */
  progress?: (line: string) => void;
}

export async function updateStream(setup: UpdateStreamSetup): Promise<UpdateStreamResult> {
  const { party, lastOffset, token } = setup;
  const jsonRequest = updatesRequest(party, 0, lastOffset);
  const grpcRequest = grpcUpdatesRequest(party, lastOffset);
  const ledger = new DirectLedger(setup.sandboxPort, token);
  const listClient = new BenchHttpClient(`http://127.0.0.1:${setup.listGateway.port}`, 1);
  const direct: number[] = [];
  const ws: number[] = [];
  const http: number[] = [];
  const ndjson: number[] = [];
  const ndjsonFirst: number[] = [];
  const ndjsonCpu: number[] = [];
  let events = 0;
  let updates = 0;
  const wsPid = setup.webSocketGateway.pid;
  const listPid = setup.listGateway.pid;
  const wsCpu: number[] = [];
  const httpCpu: number[] = [];
  let listAnswerBytes = 0;
  let listPeakRss = 0;
  let listRssBefore = 0;
  let peakRss = 0;
  let firstWsRss = 0;

  const countEvents = (element: unknown) => {
    const tx = (element as { update?: { Transaction?: { value: { events: unknown[] } } } }).update
      ?.Transaction;
    return tx ? tx.value.events.length : 0;
  };

  /** A progress line per read; with `cpu` (gateway CPU seconds over `elements`), its cost too. */
  const report = (
    run: number,
    transport: string,
    rate: number,
    cpu?: { seconds: number; elements: number },
  ) =>
    setup.progress?.(
      `${run === 0 ? "warm-up" : `run ${run}/${setup.runs}`}: ${transport} ${Math.round(rate)} events/s` +
        (cpu && setup.cost
          ? `, ${round((cpu.seconds * 1e6) / cpu.elements, 1)} µs gateway CPU per element`
          : ""),
    );
  // Run 0 warms every path up (JIT, connections, the gateways' package caches) and is not counted.
  for (let run = 0; run <= setup.runs; run++) {
    const counted = run > 0;
    // Direct gRPC: the sandbox's own rate, the ceiling of any gateway.
    {
      const started = process.hrtime.bigint();
      let seen = 0;
      await ledger.readUpdates(grpcRequest, (message) => {
        seen += message.transaction?.events.length ?? 0;
      });
      const rate = seen / secondsSince(started);
      if (counted) direct.push(rate);
      events = seen;
      report(run, "direct gRPC", rate);
    }
    // NDJSON right after direct gRPC: its first element's delay is a target, and after the list
    // twin this client would be collecting a 130 MB answer's garbage while it waits.
    {
      const pid = setup.ndjsonGateway.pid;
      const started = process.hrtime.bigint();
      const cpuBefore = processCpuSeconds(pid);
      let seen = 0;
      const read = await readNdjson(
        `http://127.0.0.1:${setup.ndjsonGateway.port}/v2/updates`,
        token,
        jsonRequest,
        (element) => {
          seen += countEvents(element);
        },
      );
      const cpuSeconds = processCpuSeconds(pid) - cpuBefore;
      if (seen !== events) throw new Error(`NDJSON delivered ${seen} events, gRPC ${events}`);
      const rate = seen / secondsSince(started);
      if (counted) {
        ndjson.push(rate);
        ndjsonFirst.push(read.firstElementMs);
        ndjsonCpu.push(cpuSeconds);
      }
      report(run, `gateway NDJSON (first element after ${round(read.firstElementMs, 1)} ms)`, rate, {
        seconds: cpuSeconds,
        elements: read.elements,
      });
    }
    {
      const started = process.hrtime.bigint();
      const cpuBefore = processCpuSeconds(wsPid);
      let seen = 0;
      let elements = 0;
      // From /proc, not the gateway's /metrics: the window holds the stream's work only.
      const sampler = setInterval(() => {
        const rss = processRssBytes(wsPid);
        peakRss = Math.max(peakRss, rss);
        // Run 0 comes before any list-twin answer (which holds the whole range in memory).
        if (run === 0) firstWsRss = Math.max(firstWsRss, rss);
      }, 250);
      try {
        await readWebSocketStream(
          `ws://127.0.0.1:${setup.webSocketGateway.port}/v2/updates`,
          token,
          jsonRequest,
          (element) => {
            seen += countEvents(element);
            elements++;
          },
        );
      } finally {
        clearInterval(sampler);
      }
      const cpuSeconds = processCpuSeconds(wsPid) - cpuBefore;
      if (counted) wsCpu.push(cpuSeconds);
      updates = elements;
      if (seen !== events) throw new Error(`the WebSocket delivered ${seen} events, gRPC ${events}`);
      const rate = seen / secondsSince(started);
      if (counted) ws.push(rate);
      report(run, "gateway WebSocket", rate, { seconds: cpuSeconds, elements });
    }
    {
      const started = process.hrtime.bigint();
      const cpuBefore = processCpuSeconds(listPid);
      const rssBefore = processRssBytes(listPid);
      let rssPeak = rssBefore;
      const sampler = setup.cost
        ? setInterval(() => {
            rssPeak = Math.max(rssPeak, processRssBytes(listPid));
          }, 20)
        : undefined;
      const text = (
        await listClient.ok("/v2/updates", { token, body: JSON.stringify(jsonRequest) })
      ).toString();
      clearInterval(sampler);
      const cpuSeconds = processCpuSeconds(listPid) - cpuBefore;
      if (counted) httpCpu.push(cpuSeconds);
      // The first answer of this gateway: no earlier answer's heap left to reuse.
      if (run === 0) {
        listAnswerBytes = Buffer.byteLength(text);
        listRssBefore = rssBefore;
        listPeakRss = rssPeak;
      }
      const elements = JSON.parse(text) as unknown[];
      const seen = elements.reduce<number>((sum, element) => sum + countEvents(element), 0);
      if (seen !== events) throw new Error(`the list twin delivered ${seen} events, gRPC ${events}`);
      const rate = seen / secondsSince(started);
      if (counted) http.push(rate);
      report(run, "gateway HTTP list twin", rate, { seconds: cpuSeconds, elements: elements.length });
    }
  }
  ledger.close();
  listClient.close();
  const rates = {
    directGrpc: median(direct),
    gatewayWebSocket: median(ws),
    gatewayHttpList: median(http),
    gatewayNdjson: median(ndjson),
  };
  return {
    events,
    runs: setup.runs,
    eventsPerSecond: {
      directGrpc: Math.round(rates.directGrpc),
      gatewayWebSocket: Math.round(rates.gatewayWebSocket),
      gatewayHttpList: Math.round(rates.gatewayHttpList),
      gatewayNdjson: Math.round(rates.gatewayNdjson),
    },
    ndjsonFirstElementMs: round(median(ndjsonFirst), 1),
    ratioToDirect: {
      gatewayWebSocket: round(rates.gatewayWebSocket / rates.directGrpc, 3),
      gatewayHttpList: round(rates.gatewayHttpList / rates.directGrpc, 3),
      gatewayNdjson: round(rates.gatewayNdjson / rates.directGrpc, 3),
    },
    gatewayPeakRssBytes: peakRss,
    gatewayFirstWebSocketRssBytes: firstWsRss,
    ...(setup.cost && {
      gatewayCost: {
        cpuMicrosPerElement: {
          webSocket: round((median(wsCpu) * 1e6) / updates, 2),
          httpList: round((median(httpCpu) * 1e6) / updates, 2),
          ndjson: round((median(ndjsonCpu) * 1e6) / updates, 2),
        },
        cpuMicrosPerEvent: {
          webSocket: round((median(wsCpu) * 1e6) / events, 2),
          httpList: round((median(httpCpu) * 1e6) / events, 2),
          ndjson: round((median(ndjsonCpu) * 1e6) / events, 2),
        },
        elements: updates,
        listAnswerBytes,
        listPeakRssBytes: listPeakRss,
        listRssBeforeBytes: listRssBefore,
      },
    }),
  };
}
