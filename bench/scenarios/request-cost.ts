import { processCpuSeconds } from "../lib/proc-stats.js";
import { round } from "../lib/stats.js";
import { type Figures, measure } from "./submit-and-wait.js";

/**
 * What one request costs the gateway process, in CPU: its CPU time (from /proc, so every thread
 * counts) over a window holding only that kind of request, divided by their number. On a shared
 * machine this holds better than a throughput ratio, which moves with whatever else runs.
 * This module measures the unary requests the submit-and-wait scenario leaves out; the request-cost
 * scenario of bench/run.ts adds that one and the update streams, each with the gateway's pid.
 */
export interface UnaryCost extends Figures {
  requests: number;
  concurrency: number;
  gatewayCpuMsPerRequest: number;
}

export interface UnaryCostSetup {
  gatewayPort: number;
  gatewayPid: number;
  party: string;
  token: string;
  requests: number;
  concurrency: number;
  progress?: (line: string) => void;
}

async function costOf(
  setup: UnaryCostSetup,
  requests: number,
  name: string,
  send: (i: number) => Promise<void>,
): Promise<UnaryCost> {
  // A few requests first, so that the window holds no first-time work (JIT, caches).
  for (let i = 0; i < 50; i++) await send(-1 - i);
  const cpuBefore = processCpuSeconds(setup.gatewayPid);
  const figures = await measure(requests, setup.concurrency, send);
  const cpu = processCpuSeconds(setup.gatewayPid) - cpuBefore;
  const cost = {
    requests,
    concurrency: setup.concurrency,
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
  const url = `http://127.0.0.1:${setup.gatewayPort}/v2/commands/submit-and-wait-for-transaction`;
  const run = `${process.pid}-${Date.now()}`;
  const payload = "x".repeat(64);
  return costOf(setup, setup.requests, "submit-and-wait-for-transaction", async (i) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${setup.token}` },
      body: JSON.stringify({
        commands: {
          commandId: `bench-cost-${run}-${i}`,
          actAs: [setup.party],
          commands: [
            {
              CreateCommand: {
                templateId: "#gateway-samples:Bench:Tick",
                createArguments: { owner: setup.party, seq: String(i), payload },
              },
            },
          ],
        },
      }),
    });
    if (res.status !== 200) throw new Error(`for-transaction answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  });
}

/** `GET /v2/state/ledger-end`: the cheapest ledger round trip, so mostly the gateway's own cost. */
export function ledgerEndCost(setup: UnaryCostSetup): Promise<UnaryCost> {
  const url = `http://127.0.0.1:${setup.gatewayPort}/v2/state/ledger-end`;
  const headers = { authorization: `Bearer ${setup.token}` };
  return costOf(setup, setup.requests * 5, "GET /v2/state/ledger-end", async () => {
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`ledger-end answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  });
}
