/**
 * Gateway CPU per unary request, alone: a sandbox of 10 ticks, a gateway in front, 4000 warm-up
 * requests (a fresh gateway's CPU per request falls some 4x while V8 optimizes its hot code, over
 * the first 2000-3000), then `GET /v2/state/ledger-end` (20 000), `submit-and-wait` creating a
 * Bench:Tick (3000), or the list twin of the active contracts, the 10 ticks (`list`: a short
 * stream call, on a token that no stream holds; 5000) at concurrency 16 (`--concurrency`: with 1,
 * no list twin's token is held by another in flight); prints the gateway's CPU
 * (from /proc) per request over that window.
 * Short enough to alternate two builds of the gateway and compare them on a shared machine:
 *   node dist/bench/micro/unary-cost.js get|submit|list [--requests N] [--warm-up N] [--cpu-prof DIR]
 * For a profile, give many more requests than the default: the process's start-up (proto
 * loading, schema compilation, protobufjs's code generation on first use) is in the profile too.
 */
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { BenchHttpClient } from "../lib/http-client.js";
import { processCpuSeconds } from "../lib/proc-stats.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import { tickCommands } from "../lib/tick-commands.js";

const { values, positionals } = commandLine(
  "micro/unary-cost.js",
  {
    "cpu-prof": { type: "string" },
    requests: { type: "string" },
    "warm-up": { type: "string" },
    concurrency: { type: "string" },
  },
  "get|submit|list",
);
const what = positionals[0] ?? "get";
if (what !== "get" && what !== "submit" && what !== "list")
  throw new Error(`get, submit or list, not ${what}`);
const sandbox = await startSandboxProcess(10, 64, 1);
const gateway = await startGatewayProcess(sandbox.port, [], {
  nodeArgs: values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]],
});
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const concurrency = Number(values.concurrency ?? 16);
const http = new BenchHttpClient(`http://127.0.0.1:${gateway.port}`, concurrency);
const run = `${process.pid}-${Date.now()}`;
const ticksList = JSON.stringify({
  eventFormat: { filtersByParty: { [sandbox.tickParty]: {} }, verbose: false },
  activeAtOffset: sandbox.lastOffset,
});

async function request(i: number): Promise<void> {
  if (what === "get") {
    await http.ok("/v2/state/ledger-end", { token });
    return;
  }
  if (what === "list") {
    await http.ok("/v2/state/active-contracts", { token, body: ticksList });
    return;
  }
  await http.ok("/v2/commands/submit-and-wait", {
    token,
    body: JSON.stringify(tickCommands(`unary-cost-${run}-${i}`, sandbox.tickParty, i)),
  });
}

try {
  const total = Number(values.requests ?? { get: 20_000, submit: 3000, list: 5000 }[what]);
  const loops = async (count: number, first: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) await request(first + next++);
      }),
    );
  };
  // Negative numbers: warm-up commands have ids of their own. 0: a cold gateway's first requests.
  const warmUp = Number(values["warm-up"] ?? 4000);
  await loops(warmUp, -warmUp);
  const pid = gateway.child.pid as number;
  const cpuBefore = processCpuSeconds(pid);
  const started = Date.now();
  await loops(total, 0);
  const ms = ((processCpuSeconds(pid) - cpuBefore) * 1000) / total;
  const rate = Math.round(total / ((Date.now() - started) / 1000));
  console.log(`${what}: ${ms.toFixed(3)} ms gateway CPU per request, ${rate}/s`);
} finally {
  http.close();
  await gateway.stop();
  await sandbox.stop();
}
