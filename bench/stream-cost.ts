/**
 * Gateway CPU per streamed element, alone: a sandbox of `--ticks` ticks (`--per-tx` per
 * transaction), a gateway in front, then the update stream [0, end] read over the WebSocket
 * (`ws`) or the HTTP list twin (`list`) to its end, a warm-up and `--runs` times; prints the
 * gateway's CPU (from /proc) per element of each run. One transport per gateway: read after a
 * list-twin answer, a WebSocket window also pays for that answer's garbage (and the other way
 * round), which hides what either costs. Short enough to alternate two builds on a shared machine:
 *   node dist/bench/stream-cost.js ws|list [--per-tx 1] [--ticks 50000] [--runs 4] [--cpu-prof DIR]
 */
import { parseArgs } from "node:util";
import { mintToken } from "../src/jwt/mint-token.js";
import { processCpuSeconds } from "./lib/proc-stats.js";
import { startGatewayProcess, startSandboxProcess } from "./lib/processes.js";
import { readWebSocketStream } from "./lib/ws-reader.js";

const { values, positionals } = parseArgs({
  options: {
    "per-tx": { type: "string", default: "1" },
    ticks: { type: "string", default: "50000" },
    runs: { type: "string", default: "4" },
    "cpu-prof": { type: "string" },
  },
  allowPositionals: true,
});
const what = positionals[0] ?? "ws";
if (what !== "ws" && what !== "list") throw new Error(`ws or list, not ${what}`);
const ticks = Number(values.ticks);
const sandbox = await startSandboxProcess(ticks, 64, Number(values["per-tx"]));
const gateway = await startGatewayProcess(
  sandbox.port,
  ["--websocket-config.http-list-max-elements-limit", String(ticks + 1000)],
  { nodeArgs: values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]] },
);
const party = sandbox.tickParty;
const token = mintToken({ user: `actAs-${party}`, secret: "bench", expiresInSeconds: 3600 });
const request = {
  beginExclusive: 0,
  endInclusive: sandbox.lastOffset,
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
};

/** Reads the stream to its end; resolves with its number of elements. */
async function read(): Promise<number> {
  if (what === "ws") {
    return (await readWebSocketStream(`ws://127.0.0.1:${gateway.port}/v2/updates`, token, request)).elements;
  }
  const res = await fetch(`http://127.0.0.1:${gateway.port}/v2/updates`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(request),
  });
  if (res.status !== 200) throw new Error(`list twin answered ${res.status}: ${await res.text()}`);
  return (JSON.parse(await res.text()) as unknown[]).length;
}

try {
  const pid = gateway.child.pid as number;
  const perElement: string[] = [];
  // Run 0 warms the path up (JIT, the package cache) and is not counted.
  for (let run = 0; run <= Number(values.runs); run++) {
    const cpuBefore = processCpuSeconds(pid);
    const elements = await read();
    const micros = ((processCpuSeconds(pid) - cpuBefore) * 1e6) / elements;
    if (run > 0) perElement.push(micros.toFixed(1));
  }
  console.log(
    `${what}, ${values["per-tx"]} events/tx, ${sandbox.lastOffset} offsets: µs gateway CPU per element ${perElement.join(", ")}`,
  );
} finally {
  await gateway.stop();
  await sandbox.stop();
}
