/**
 * What one WebSocket upgrade costs the gateway, without a query: the ledger's admission (one
 * token, so a crowd's upgrades in flight together share it), the upgrade, the open and the
 * client's close. Starts the standalone sandbox and one unpaced gateway worker as processes of
 * their own (bench/lib/processes.ts) and reads the gateway's CPU from /proc over N upgrades,
 * `--concurrency` at a time, after a warm-up of 300. The gateway's stderr is this one's: uWS
 * writes its corking warning there once per upgrade made outside a cork.
 *
 *   node --import tsx bench/micro/gateway-upgrade.ts [--upgrades 3000] [--concurrency 20] \
 *     2> >(grep -c "corked callback")
 *
 * To compare two builds, run it from each checkout in turn (A B A B): the figure is the
 * checkout's own gateway.
 */

import WebSocket from "ws";
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { measuredCrowd } from "../lib/counted-crowd.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";

const { values } = commandLine("micro/gateway-upgrade.js", {
  upgrades: { type: "string", default: "3000" },
  concurrency: { type: "string", default: "20" },
});
const upgrades = Number(values.upgrades);
const concurrency = Number(values.concurrency);

const sandbox = await startSandboxProcess(1, 100, 1);
const gateway = await startGatewayProcess(sandbox.port, ["--websocket-config.upgrades-per-second", "0"], {
  workers: 1,
  raiseFdLimit: true,
});
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const url = `ws://127.0.0.1:${gateway.port}/v2/updates`;

const one = () =>
  new Promise<number>((resolve) => {
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`], { perMessageDeflate: false });
    socket.on("open", () => socket.close(1000));
    socket.on("error", () => undefined);
    socket.on("close", (code) => resolve(code));
  });
try {
  const { cpuMicrosEach, outcomes } = await measuredCrowd(
    gateway.child.pid as number,
    { warmUp: 300, count: upgrades, concurrency },
    one,
  );
  console.log(
    `${cpuMicrosEach.toFixed(1)} µs gateway CPU per upgrade (admission, upgrade, open, close), ` +
      `N=${upgrades}, close codes ${JSON.stringify(outcomes)}`,
  );
} finally {
  await gateway.stop();
  await sandbox.stop();
}
