import { BenchHttpClient } from "../../lib/http-client.js";
import { processCpuSeconds } from "../../lib/proc-stats.js";
import { round } from "../../lib/stats.js";
import { tickCommands } from "../../lib/tick-commands.js";
import { type Figures, measure, type SubmitAndWaitResult } from "./submit-and-wait.js";
import type { UpdateStreamResult } from "./update-stream.js";

/**
 * What one request costs the gateway process, in CPU: its CPU time (from /proc, so every thread
 * counts) over a window holding only that kind of request, divided by their number. On a shared
 * machine this holds better than a throughput ratio, which moves with whatever else runs.
 * This module measures the unary requests the submit-and-wait scenario leaves out; the request-cost
 * scenario of bench/rig/run.ts adds that one and the update streams, each with the gateway's pid.
 */
export interface UnaryCost extends Figures {
  requests: number;
  concurrency: number;
  /** Requests the gateway answered, at `concurrency`, before its window. */
  warmUp: number;
  gatewayCpuMsPerRequest: number;
}

/**
 * The request-cost scenario's figures (`requestCost` of a results file, beside its `targets`).
 * Each measured kind has a gateway process of its own, started for it in front of the scenario's
 * sandbox and stopped after it, so that its window holds its own requests and nothing left over
 * from another kind: neither the garbage of a 130 MB list-twin answer nor the JIT warm-up that
 * another kind's requests give the code paths they share (for-transaction measured after
 * submit-and-wait on one gateway looked cheaper than it). Every window follows its gateway's
 * warm-up (`warmUp`, or run 0).
 */
export interface RequestCostResult {
  /**
   * Its own gateway; its window: `commands` submit-and-wait after `warmUp` of them (the direct
   * gRPC ones, before, reach the sandbox only).
   */
  submitAndWait: SubmitAndWaitResult;
  /** Its own gateway; its window: `requests` submit-and-wait-for-transaction after `warmUp`. */
  submitAndWaitForTransaction: UnaryCost;
  /** Its own gateway; its window: `requests` GET /v2/state/ledger-end after `warmUp`. */
  ledgerEnd: UnaryCost;
  /**
   * Two gateways in front of the 1-event sandbox, one read over WebSocket only and one over the
   * list twin only, interleaved with direct gRPC reads; each CPU window is one read of the range
   * (run 0 warms up), the list twin's RSS is its gateway's first answer.
   */
  updateStream: UpdateStreamResult & { eventsPerTransaction: number };
  /** As `updateStream`, on a sandbox of `eventsPerTransaction` events per transaction. */
  updateStreamBatched: UpdateStreamResult & { eventsPerTransaction: number };
  /** Say which windows a file's figures come from: older files' windows shared one gateway. */
  gateways: string;
}

export interface UnaryCostSetup {
  gatewayPort: number;
  gatewayPid: number;
  party: string;
  token: string;
  requests: number;
  concurrency: number;
  /** Requests sent before the window, at `concurrency` (see SubmitAndWaitSetup's `warmUp`). */
  warmUp: number;
  progress?: (line: string) => void;
}

async function costOf(
  setup: UnaryCostSetup,
  requests: number,
  name: string,
  send: (http: BenchHttpClient, i: number) => Promise<void>,
): Promise<UnaryCost> {
  const http = new BenchHttpClient(`http://127.0.0.1:${setup.gatewayPort}`, setup.concurrency);
  // Negative numbers: warm-up requests have ids of their own.
  await measure(setup.warmUp, setup.concurrency, (i) => send(http, -1 - i));
  const cpuBefore = processCpuSeconds(setup.gatewayPid);
  const figures = await measure(requests, setup.concurrency, (i) => send(http, i));
  const cpu = processCpuSeconds(setup.gatewayPid) - cpuBefore;
  http.close();
  const cost = {
    requests,
    concurrency: setup.concurrency,
    warmUp: setup.warmUp,
    ...figures,
    gatewayCpuMsPerRequest: round((cpu * 1000) / requests, 3),
  };
  setup.progress?.(
    `${name}: ${cost.gatewayCpuMsPerRequest} ms gateway CPU per request, ${figures.commandsPerSecond}/s`,
  );
  return cost;
}

/** `POST /v2/commands/submit-and-wait-for-transaction` creating a Bench:Tick each. */
export function submitAndWaitForTransactionCost(setup: UnaryCostSetup): Promise<UnaryCost> {
  const run = `${process.pid}-${Date.now()}`;
  return costOf(setup, setup.requests, "submit-and-wait-for-transaction", async (http, i) => {
    await http.ok("/v2/commands/submit-and-wait-for-transaction", {
      token: setup.token,
      body: JSON.stringify({ commands: tickCommands(`bench-cost-${run}-${i}`, setup.party, i) }),
    });
  });
}

/** `GET /v2/state/ledger-end`: the cheapest ledger round trip, so mostly the gateway's own cost. */
export function ledgerEndCost(setup: UnaryCostSetup): Promise<UnaryCost> {
  return costOf(setup, setup.requests * 5, "GET /v2/state/ledger-end", async (http) => {
    await http.ok("/v2/state/ledger-end", { token: setup.token });
  });
}
