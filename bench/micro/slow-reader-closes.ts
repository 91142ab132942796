/**
 * How a slow WebSocket reader's streams end (issue 20 item 6, the early 1006): a sandbox of 2000
 * ticks of 4 KiB, a gateway with 16/4 KiB water marks, a 2 MiB hard limit and keep-alive pings
 * every `--ping-interval`, and `--reads` reads of the whole update stream by a `ws` client that
 * stops reading for 300 ms every `--every` frames. Prints each read that did not end 1000 (1008
 * with its slow-consumer frame is a legitimate end; 1006 is a lost close), then the close codes
 * counted, by the client and by the gateway. Before the close waited for the pong to a ping after
 * the last frame, about 1 read in 30 ended 1006 (5 in 6 with 1 s pings):
 *   node --import tsx bench/micro/slow-reader-closes.ts [--reads 300] [--every 100] [--ping-interval 1s]
 */
import WebSocket from "ws";
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import { updatesRequest } from "../rig/scenarios/fanout.js";

const { values } = commandLine("micro/slow-reader-closes.js", {
  reads: { type: "string", default: "300" },
  every: { type: "string", default: "100" },
  "ping-interval": { type: "string", default: "1s" },
});
const every = Number(values.every);
const sandbox = await startSandboxProcess(2000, 4096);
const gateway = await startGatewayProcess(sandbox.port, [
  ...["--websocket-config.high-water-mark", "16384", "--websocket-config.low-water-mark", "4096"],
  ...[
    "--websocket-config.hard-limit",
    "2097152",
    "--websocket-config.ping-interval",
    values["ping-interval"],
  ],
]);
const request = updatesRequest(sandbox.tickParty, 0, sandbox.lastOffset);

/** One read of the whole stream: its close code, and how many frames came before it. */
function read(): Promise<{ code: number; frames: number }> {
  // A token per read: a run outlasts any one token's lifetime.
  const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 300 });
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    let frames = 0;
    socket.on("open", () => socket.send(JSON.stringify(request)));
    socket.on("message", () => {
      frames++;
      if (frames % every === 0) {
        socket.pause();
        setTimeout(() => socket.resume(), 300);
      }
    });
    socket.on("close", (code) => resolve({ code, frames }));
    socket.on("error", () => undefined);
  });
}

const codes: Record<string, number> = {};
for (let i = 0; i < Number(values.reads); i++) {
  const { code, frames } = await read();
  codes[code] = (codes[code] ?? 0) + 1;
  if (code !== 1000) console.log(`read ${i}: close ${code} after ${frames} frames`);
}
const metrics = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
const gatewayCodes = [
  ...metrics.matchAll(/^ledger_gateway_ws_closes_total\{endpoint="\/v2\/updates",code="(\w+)"\} (\d+)/gm),
]
  .filter((m) => m[2] !== "0")
  .map((m) => `${m[1]}: ${m[2]}`);
console.log(`client closes ${JSON.stringify(codes)}; gateway closes {${gatewayCodes.join(", ")}}`);
await gateway.stop();
await sandbox.stop();
