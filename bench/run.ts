/**
 * `make bench`: the gateway against direct gRPC on the same preloaded sandbox, in one run.
 *   node dist/bench/run.js [--ticks 100000] [--payload 64] [--runs 3] [--commands 2000]
 *                          [--concurrency 16] [--batch 10]
 * Prints its progress (each phase, each run of each transport, each quarter of the commands)
 * and writes a new bench/results/gateway-<date>-<commit>.json per run, with the machine and the
 * commit (`make bench-readme` then renders the README's table from the newest committed one). Target (checked here, never in
 * tests): the WebSocket update stream delivers at least 80% of the direct gRPC rate.
 * The update stream is measured twice: one event per transaction (the worst case: every event
 * pays a message's overhead) and `--batch` events per transaction.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { mintToken } from "../src/jwt/mint-token.js";
import { projectRoot } from "../src/proto/project-root.js";
import { type RunningSandbox, startGatewayProcess, startSandboxProcess } from "./lib/processes.js";
import { provenance, resultFileName } from "./lib/results.js";
import { submitAndWait } from "./scenarios/submit-and-wait.js";
import { type UpdateStreamResult, updateStream } from "./scenarios/update-stream.js";

const WS_TARGET = 0.8;

const { values } = parseArgs({
  options: {
    ticks: { type: "string", default: "100000" },
    payload: { type: "string", default: "64" },
    runs: { type: "string", default: "3" },
    commands: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    batch: { type: "string", default: "10" },
  },
});
const ticks = Number(values.ticks);
const payloadBytes = Number(values.payload);
const startedAt = new Date();
const origin = process.hrtime.bigint();
/** One progress line, with the time since the start: the bench takes minutes. */
const progress = (phase: string) => (line: string) => {
  const seconds = Number(process.hrtime.bigint() - origin) / 1e9;
  console.log(`[${seconds.toFixed(1).padStart(6)} s] ${phase}: ${line}`);
};

interface Stack {
  sandbox: RunningSandbox;
  gatewayPort: number;
  /** `actAs-<party>`: the unsecured sandbox checks rights, not signatures. */
  token: string;
  gatewayRss: () => Promise<number>;
}

/** A preloaded sandbox and a gateway in front of it, for the length of `body`. */
async function withStack<T>(perTransaction: number, body: (stack: Stack) => Promise<T>): Promise<T> {
  const say = progress(`set-up ${perTransaction}/tx`);
  say(`starting the sandbox, preloading ${ticks} ticks of ${payloadBytes} B ...`);
  const sandbox = await startSandboxProcess(ticks, payloadBytes, perTransaction);
  say(`sandbox ready (offsets up to ${sandbox.lastOffset}); starting the gateway ...`);
  try {
    // One list-twin answer holds the whole range, as the WebSocket does.
    const gateway = await startGatewayProcess(sandbox.port, [
      "--websocket-config.http-list-max-elements-limit",
      String(ticks + 1000),
    ]);
    try {
      return await body({
        sandbox,
        gatewayPort: gateway.port,
        token: mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 }),
        gatewayRss: async () => {
          const text = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
          return Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? 0);
        },
      });
    } finally {
      await gateway.stop();
    }
  } finally {
    await sandbox.stop();
  }
}

const streamOf = (phase: string) => (stack: Stack) =>
  updateStream({
    progress: progress(phase),
    sandboxPort: stack.sandbox.port,
    gatewayPort: stack.gatewayPort,
    party: stack.sandbox.tickParty,
    lastOffset: stack.sandbox.lastOffset,
    token: stack.token,
    runs: Number(values.runs),
    gatewayRss: stack.gatewayRss,
  });

const phases = 3;
console.log(
  `phase 1/${phases} update stream: ${ticks} ticks of ${payloadBytes} B, one per transaction, ` +
    `warm-up + ${values.runs} runs of direct gRPC, WebSocket and list twin ...`,
);
const single = await withStack(1, async (stack) => {
  const updates = await streamOf("update stream 1/tx")(stack);
  console.log(
    `phase 2/${phases} submit-and-wait: ${values.commands} commands at concurrency ${values.concurrency} ...`,
  );
  const commands = await submitAndWait({
    progress: progress("submit-and-wait"),
    sandboxPort: stack.sandbox.port,
    gatewayPort: stack.gatewayPort,
    party: stack.sandbox.tickParty,
    token: stack.token,
    commands: Number(values.commands),
    concurrency: Number(values.concurrency),
  });
  return { updates, commands };
});
console.log(`phase 3/${phases} update stream: ${ticks} ticks, ${values.batch} per transaction ...`);
const batched = await withStack(Number(values.batch), streamOf(`update stream ${values.batch}/tx`));

const met = (u: UpdateStreamResult) => u.ratioToDirect.gatewayWebSocket >= WS_TARGET;
const root = projectRoot();
const { commit, machine } = provenance(root);
const result = {
  date: startedAt.toISOString(),
  node: process.version,
  cpus: machine.cpus,
  commit,
  machine,
  command: `node dist/bench/run.js --ticks ${ticks} --payload ${payloadBytes} --runs ${values.runs} --commands ${values.commands} --concurrency ${values.concurrency} --batch ${values.batch}`,
  updateStream: { eventsPerTransaction: 1, ...single.updates },
  updateStreamBatched: { eventsPerTransaction: Number(values.batch), ...batched },
  submitAndWait: single.commands,
  targets: {
    webSocketVsDirect: { min: WS_TARGET, met: met(single.updates), metBatched: met(batched) },
  },
};
const dir = join(root, "bench", "results");
mkdirSync(dir, { recursive: true });
const file = join(dir, resultFileName(startedAt, commit));
// A new file per run ("wx": never overwrite one), so committed results stay what they were.
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`, { flag: "wx" });

const row = (u: UpdateStreamResult) => ({
  "direct gRPC": u.eventsPerSecond.directGrpc,
  "gateway WebSocket": u.eventsPerSecond.gatewayWebSocket,
  "gateway HTTP list": u.eventsPerSecond.gatewayHttpList,
  "WS vs direct": u.ratioToDirect.gatewayWebSocket,
  "list vs direct": u.ratioToDirect.gatewayHttpList,
});
console.table({ "1 event/tx": row(single.updates), [`${values.batch} events/tx`]: row(batched) });
console.table({ "direct gRPC": single.commands.directGrpc, gateway: single.commands.gateway });
console.log(
  `gateway RSS: ${(single.updates.gatewayFirstWebSocketRssBytes / 2 ** 20).toFixed(0)} MiB streaming on a fresh gateway, ` +
    `${(single.updates.gatewayPeakRssBytes / 2 ** 20).toFixed(0)} MiB peak after whole-range list answers; ` +
    `WebSocket target >= ${WS_TARGET}: ${met(single.updates) ? "met" : "NOT met"} (1/tx), ` +
    `${met(batched) ? "met" : "NOT met"} (${values.batch}/tx)`,
);
console.log(
  `wrote ${relative(root, file)} (commit ${commit ? commit.id.slice(0, 7) : "?"}${commit?.dirty ? ", uncommitted changes" : ""}); ` +
    "commit it, then `make bench-readme` puts it in the README",
);
