import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { processCpuSeconds, processRssBytes } from "../lib/proc-stats.js";
import { median, round, secondsSince } from "../lib/stats.js";
import { readWebSocketStream } from "../lib/ws-reader.js";

/**
 * Update stream throughput over the same preloaded ledger, in one run: a direct gRPC client of
 * the sandbox, the gateway's WebSocket, and the gateway's HTTP list twin. Every transport reads
 * the whole range [0, end] as a client would (protobuf objects for gRPC, parsed JSON for the
 * gateway); runs are interleaved so that machine noise hits all of them alike.
 */
export interface UpdateStreamResult {
  events: number;
  runs: number;
  eventsPerSecond: { directGrpc: number; gatewayWebSocket: number; gatewayHttpList: number };
  ratioToDirect: { gatewayWebSocket: number; gatewayHttpList: number };
  /** Peak resident memory of the gateway over all WebSocket runs (list-twin answers before them included). */
  gatewayPeakRssBytes: number;
  /** Peak resident memory during the first WebSocket stream of a fresh gateway: what streaming costs. */
  gatewayFirstWebSocketRssBytes: number;
  /** With the gateway's pid: its CPU per element and what one list-twin answer costs in memory. */
  gatewayCost?: GatewayStreamCost;
}

export interface GatewayStreamCost {
  /** Median over the counted runs of the gateway's CPU over one read / elements read. */
  cpuMicrosPerElement: { webSocket: number; httpList: number };
  cpuMicrosPerEvent: { webSocket: number; httpList: number };
  /** Elements (updates) of one read, and the bytes of one list-twin answer. */
  elements: number;
  listAnswerBytes: number;
  /** Peak resident memory while answering the list twin (sampled every 20 ms), and before it. */
  listPeakRssBytes: number;
  listRssBeforeBytes: number;
}

export interface UpdateStreamSetup {
  sandboxPort: number;
  gatewayPort: number;
  party: string;
  lastOffset: number;
  token: string;
  runs: number;
  /** Resident memory of the gateway process, sampled by the caller. */
  gatewayRss: () => Promise<number>;
  /** The gateway's process, to read its CPU and memory from /proc. */
  gatewayPid?: number;
  /** Called with one line per measured pass (warm-up included), as the bench runs. */
  progress?: (line: string) => void;
}

const filter = (party: string) => ({
  filtersByParty: { [party]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] } },
});

export async function updateStream(setup: UpdateStreamSetup): Promise<UpdateStreamResult> {
  const { party, lastOffset, token } = setup;
  const jsonRequest = {
    beginExclusive: 0,
    endInclusive: lastOffset,
    updateFormat: {
      includeTransactions: { eventFormat: filter(party), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
    },
  };
  const grpcRequest = {
    beginExclusive: "0",
    endInclusive: String(lastOffset),
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: {
            [party]: { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: false } }] },
          },
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
  const ledger = new LedgerClient({ target: `127.0.0.1:${setup.sandboxPort}`, deadlineMs: 600_000 });
  const direct: number[] = [];
  const ws: number[] = [];
  const http: number[] = [];
  let events = 0;
  let updates = 0;
  const pid = setup.gatewayPid;
  const cpu = () => (pid === undefined ? 0 : processCpuSeconds(pid));
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

  const report = (run: number, transport: string, rate: number) =>
    setup.progress?.(
      `${run === 0 ? "warm-up" : `run ${run}/${setup.runs}`}: ${transport} ${Math.round(rate)} events/s`,
    );
  // Run 0 warms every path up (JIT, connections, the gateway's package cache) and is not counted.
  for (let run = 0; run <= setup.runs; run++) {
    const counted = run > 0;
    // Direct gRPC: the sandbox's own rate, the ceiling of any gateway.
    {
      const started = process.hrtime.bigint();
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        const call = ledger.serverStream<{ transaction?: { events: unknown[] } }>(
          "UpdateService",
          "GetUpdates",
          grpcRequest,
          token,
        );
        call.on("data", (message) => {
          seen += message.transaction?.events.length ?? 0;
        });
        call.on("end", resolve);
        call.on("error", reject);
      });
      const rate = seen / secondsSince(started);
      if (counted) direct.push(rate);
      events = seen;
      report(run, "direct gRPC", rate);
    }
    {
      const started = process.hrtime.bigint();
      const cpuBefore = cpu();
      let seen = 0;
      let elements = 0;
      const sampler = setInterval(
        () =>
          void setup.gatewayRss().then((rss) => {
            peakRss = Math.max(peakRss, rss);
            // Run 0 comes before any list-twin answer (which holds the whole range in memory).
            if (run === 0) firstWsRss = Math.max(firstWsRss, rss);
          }),
        250,
      );
      try {
        await readWebSocketStream(
          `ws://127.0.0.1:${setup.gatewayPort}/v2/updates`,
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
      if (counted) wsCpu.push(cpu() - cpuBefore);
      updates = elements;
      if (seen !== events) throw new Error(`the WebSocket delivered ${seen} events, gRPC ${events}`);
      const rate = seen / secondsSince(started);
      if (counted) ws.push(rate);
      report(run, "gateway WebSocket", rate);
    }
    {
      const started = process.hrtime.bigint();
      const cpuBefore = cpu();
      const rssBefore = pid === undefined ? 0 : processRssBytes(pid);
      let rssPeak = rssBefore;
      const sampler =
        pid === undefined
          ? undefined
          : setInterval(() => {
              rssPeak = Math.max(rssPeak, processRssBytes(pid));
            }, 20);
      const res = await fetch(`http://127.0.0.1:${setup.gatewayPort}/v2/updates`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify(jsonRequest),
      });
      if (res.status !== 200)
        throw new Error(`list twin answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      const text = await res.text();
      clearInterval(sampler);
      if (counted) httpCpu.push(cpu() - cpuBefore);
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
      report(run, "gateway HTTP list twin", rate);
    }
  }
  ledger.close();
  const rates = { directGrpc: median(direct), gatewayWebSocket: median(ws), gatewayHttpList: median(http) };
  return {
    events,
    runs: setup.runs,
    eventsPerSecond: {
      directGrpc: Math.round(rates.directGrpc),
      gatewayWebSocket: Math.round(rates.gatewayWebSocket),
      gatewayHttpList: Math.round(rates.gatewayHttpList),
    },
    ratioToDirect: {
      gatewayWebSocket: round(rates.gatewayWebSocket / rates.directGrpc, 3),
      gatewayHttpList: round(rates.gatewayHttpList / rates.directGrpc, 3),
    },
    gatewayPeakRssBytes: peakRss,
    gatewayFirstWebSocketRssBytes: firstWsRss,
    ...(pid !== undefined && {
      gatewayCost: {
        cpuMicrosPerElement: {
          webSocket: round((median(wsCpu) * 1e6) / updates, 2),
          httpList: round((median(httpCpu) * 1e6) / updates, 2),
        },
        cpuMicrosPerEvent: {
          webSocket: round((median(wsCpu) * 1e6) / events, 2),
          httpList: round((median(httpCpu) * 1e6) / events, 2),
        },
        elements: updates,
        listAnswerBytes,
        listPeakRssBytes: listPeakRss,
        listRssBeforeBytes: listRssBefore,
      },
    }),
  };
}
