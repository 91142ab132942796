/**
 * Gateway CPU per streamed element, alone: a sandbox of `--ticks` ticks (`--per-tx` per
 * transaction), a gateway in front, then the update stream [0, end] read to its end over the
 * WebSocket (`ws`), the HTTP list twin (`list`), the list twin streamed (`ndjson`, each line
 * parsed as it arrives) or, for the ratio, straight from the sandbox
 * with grpc-js (`direct`, decoded objects, as bench/rig/scenarios/update-stream.ts reads it), a
 * warm-up and `--runs` times. Prints the gateway's CPU (from /proc) per element of each run,
 * then the medians per element of each process's CPU (sandbox, gateway, this client) and of the
 * wall time: on two shared cores, the process whose CPU comes near the wall time is the one the
 * throughput waits for. For `list`, also when the answer's head arrived (the gateway answers
 * once the stream ended: its status depends on the whole stream). Last, the gateway's major
 * GCs over the counted runs (from its /metrics): a list-twin answer held in external memory
 * while it grows starts them, and their marking is CPU the element pays. One transport per gateway:
 * read after a list-twin answer, a WebSocket window also pays for that answer's garbage (and the
 * other way round), which hides what either costs. Short enough to alternate two builds on a
 * shared machine:
 *   node dist/bench/micro/stream-cost.js ws|list|ndjson|direct [--per-tx 1] [--ticks 50000] [--runs 4] [--cpu-prof DIR]
 */
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { DirectLedger, grpcUpdatesRequest } from "../lib/grpc-direct.js";
import { readNdjson } from "../lib/ndjson-reader.js";
import { processCpuSeconds } from "../lib/proc-stats.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import { readWebSocketStream } from "../lib/ws-reader.js";
import { updatesRequest } from "../rig/scenarios/fanout.js";

const { values, positionals } = commandLine(
  "micro/stream-cost.js",
  {
    "per-tx": { type: "string", default: "1" },
    ticks: { type: "string", default: "50000" },
    runs: { type: "string", default: "4" },
    "cpu-prof": { type: "string" },
  },
  "ws|list|ndjson|direct",
);
const what = positionals[0] ?? "ws";
if (what !== "ws" && what !== "list" && what !== "ndjson" && what !== "direct") {
  throw new Error(`ws, list, ndjson or direct, not ${what}`);
}
const ticks = Number(values.ticks);
const sandbox = await startSandboxProcess(ticks, 64, Number(values["per-tx"]));
const gateway = await startGatewayProcess(
  sandbox.port,
  ["--websocket-config.http-list-max-elements-limit", String(ticks + 1000)],
  { nodeArgs: values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]] },
);
const party = sandbox.tickParty;
const token = mintToken({ user: `actAs-${party}`, secret: "bench", expiresInSeconds: 3600 });
const request = updatesRequest(party, 0, sandbox.lastOffset);

const ledger = new DirectLedger(sandbox.port, token);
const grpcRequest = grpcUpdatesRequest(party, sandbox.lastOffset);

/** Reads the stream to its end; resolves with its number of elements and, for `list`, when its head came. */
async function read(): Promise<{ elements: number; head?: bigint }> {
  if (what === "ws") {
    return {
      elements: (await readWebSocketStream(`ws://127.0.0.1:${gateway.port}/v2/updates`, token, request))
        .elements,
    };
  }
  if (what === "ndjson") {
    const started = process.hrtime.bigint();
    const read = await readNdjson(`http://127.0.0.1:${gateway.port}/v2/updates`, token, request, () => {});
    return { elements: read.elements, head: started + BigInt(Math.round(read.firstElementMs * 1e6)) };
  }
  if (what === "direct") {
    let elements = 0;
    await ledger.readUpdates(grpcRequest, () => elements++);
    return { elements };
  }
  const res = await fetch(`http://127.0.0.1:${gateway.port}/v2/updates`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(request),
  });
  const head = process.hrtime.bigint();
  if (res.status !== 200) throw new Error(`list twin answered ${res.status}: ${await res.text()}`);
  return { elements: (JSON.parse(await res.text()) as unknown[]).length, head };
}

/** CPU seconds so far of the sandbox, the gateway and this client. */
function cpus(): [number, number, number] {
  const self = process.cpuUsage();
  return [
    processCpuSeconds(sandbox.child.pid as number),
    processCpuSeconds(gateway.child.pid as number),
    (self.user + self.system) / 1e6,
  ];
}

/** The gateway's major GCs so far: how many, and their pauses in seconds (prom-client's default metrics). */
async function majorGcs(): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
  const value = (name: string) =>
    Number(
      new RegExp(`^nodejs_gc_duration_seconds_${name}\\{kind="major"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0,
    );
  return { count: value("count"), seconds: value("sum") };
}

try {
  let gcBefore = { count: 0, seconds: 0 };
  const runs: { sandbox: number; gateway: number; client: number; wall: number; head: number }[] = [];
  // Run 0 warms the path up (JIT, the package cache) and is not counted.
  for (let run = 0; run <= Number(values.runs); run++) {
    const before = cpus();
    const started = process.hrtime.bigint();
    const { elements, head } = await read();
    const micros = (since: bigint) => Number(since - started) / 1e3 / elements;
    const wall = micros(process.hrtime.bigint());
    const after = cpus();
    const cpu = (i: 0 | 1 | 2) => ((after[i] - before[i]) * 1e6) / elements;
    if (run === 0) gcBefore = await majorGcs();
    if (run > 0) {
      runs.push({ sandbox: cpu(0), gateway: cpu(1), client: cpu(2), wall, head: head ? micros(head) : 0 });
    }
  }
  const median = (key: keyof (typeof runs)[number]) =>
    (runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)] as number).toFixed(1);
  console.log(
    `${what}, ${values["per-tx"]} events/tx, ${sandbox.lastOffset} offsets: µs gateway CPU per element ${runs.map((r) => r.gateway.toFixed(1)).join(", ")}`,
  );
  console.log(
    `  medians, µs per element: CPU sandbox ${median("sandbox")}, gateway ${median("gateway")}, client ${median("client")}; wall ${median("wall")}${what === "list" || what === "ndjson" ? ` (${what === "list" ? "head" : "first element"} after ${median("head")})` : ""}`,
  );
  const gcAfter = await majorGcs();
  console.log(
    `  gateway major GCs over the counted runs: ${gcAfter.count - gcBefore.count}, pauses ${Math.round((gcAfter.seconds - gcBefore.seconds) * 1000)} ms`,
  );
} finally {
  ledger.close();
  await gateway.stop();
  await sandbox.stop();
}
