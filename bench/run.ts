/**
 * `make bench`: the gateway against direct gRPC on the same preloaded sandbox, in one run.
 *   node dist/bench/run.js [--ticks 100000] [--payload 64] [--runs 3] [--commands 2000] [--concurrency 16]
 * Writes bench/results/gateway-v1.json and prints a summary. Targets (checked here, not in
 * tests): the WebSocket update stream delivers at least 80% of the direct gRPC rate.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { mintToken } from "../src/auth/mint-token.js";
import { projectRoot } from "../src/proto/project-root.js";
import { startGatewayProcess, startSandboxProcess } from "./lib/processes.js";
import { submitAndWait } from "./scenarios/submit-and-wait.js";
import { updateStream } from "./scenarios/update-stream.js";

const WS_TARGET = 0.8;

const { values } = parseArgs({
  options: {
    ticks: { type: "string", default: "100000" },
    payload: { type: "string", default: "64" },
    runs: { type: "string", default: "3" },
    commands: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
  },
});
const ticks = Number(values.ticks);
const payloadBytes = Number(values.payload);

const sandbox = await startSandboxProcess(ticks, payloadBytes);
const gateway = await startGatewayProcess(sandbox.port, [
  // One list-twin answer holds the whole range, as the WebSocket does.
  "--websocket-config.http-list-max-elements-limit",
  String(ticks + 1000),
]).catch(async (error: unknown) => {
  await sandbox.stop();
  throw error;
});

// The unsecured sandbox checks rights, not signatures: `actAs-<party>` may act and read as the party.
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const gatewayRss = async () => {
  const text = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
  return Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? 0);
};

try {
  console.log(
    `update stream: ${ticks} preloaded ticks of ${payloadBytes} B, ${values.runs} runs per transport ...`,
  );
  const updates = await updateStream({
    sandboxPort: sandbox.port,
    gatewayPort: gateway.port,
    party: sandbox.tickParty,
    lastOffset: sandbox.lastOffset,
    token,
    runs: Number(values.runs),
    gatewayRss,
  });
  console.log(`submit-and-wait: ${values.commands} commands at concurrency ${values.concurrency} ...`);
  const commands = await submitAndWait({
    sandboxPort: sandbox.port,
    gatewayPort: gateway.port,
    party: sandbox.tickParty,
    token,
    commands: Number(values.commands),
    concurrency: Number(values.concurrency),
  });
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? "?"}`,
    command: `make bench ARGS="--ticks ${ticks} --payload ${payloadBytes} --runs ${values.runs} --commands ${values.commands} --concurrency ${values.concurrency}"`,
    updateStream: updates,
    submitAndWait: commands,
    targets: {
      webSocketVsDirect: { min: WS_TARGET, met: updates.ratioToDirect.gatewayWebSocket >= WS_TARGET },
    },
  };
  const dir = join(projectRoot(), "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "gateway-v1.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.table({
    "direct gRPC": { "events/s": updates.eventsPerSecond.directGrpc, "vs direct": 1 },
    "gateway WebSocket": {
      "events/s": updates.eventsPerSecond.gatewayWebSocket,
      "vs direct": updates.ratioToDirect.gatewayWebSocket,
    },
    "gateway HTTP list": {
      "events/s": updates.eventsPerSecond.gatewayHttpList,
      "vs direct": updates.ratioToDirect.gatewayHttpList,
    },
  });
  console.table({ "direct gRPC": commands.directGrpc, gateway: commands.gateway });
  console.log(
    `gateway peak RSS during the WebSocket stream: ${(updates.gatewayPeakRssBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  console.log(
    `WebSocket/direct = ${updates.ratioToDirect.gatewayWebSocket} (target >= ${WS_TARGET}: ${result.targets.webSocketVsDirect.met ? "met" : "NOT met"})`,
  );
  console.log("wrote bench/results/gateway-v1.json");
} finally {
  await gateway.stop();
  await sandbox.stop();
}
