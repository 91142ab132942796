/**
 * What a WebSocket upgrade the pacer refuses costs the gateway: its arrival, the token's claims
 * read, the pace's verdict and the 503 with Retry-After, written and closed. A reconnect storm
 * past what the pace takes within upgrade-max-wait is refused this way (7,000 of a 10,000 crowd
 * of one user at the defaults), so the figure is part of a storm's CPU per start and of the
 * worker's stall while the crowd arrives. Starts the standalone sandbox and one gateway worker
 * paced at 1 upgrade a second with no wait, so that every upgrade past the first is refused, and
 * reads the gateway's CPU from /proc over N raw upgrade requests, 50 at a time, after 2,000.
 *
 *   node --import tsx bench/micro/upgrade-refusal.ts [--requests 10000]
 *
 * To compare two builds, run it from each checkout in turn (A B A B): the figure is the
 * checkout's own gateway. Bare uWS answering the same 503 here costs about 30 µs a request.
 */

import { connect } from "node:net";
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { measuredCrowd } from "../lib/counted-crowd.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";

const { values } = commandLine("micro/upgrade-refusal.js", {
  requests: { type: "string", default: "10000" },
});
const requests = Number(values.requests);

const sandbox = await startSandboxProcess(1, 100, 1);
const gateway = await startGatewayProcess(
  sandbox.port,
  ["--websocket-config.upgrades-per-second", "1", "--websocket-config.upgrade-max-wait", "0s"],
  { workers: 1, raiseFdLimit: true },
);
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const upgradeRequest = [
  "GET /v2/updates HTTP/1.1",
  "Host: 127.0.0.1",
  "Upgrade: websocket",
  "Connection: Upgrade",
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  "Sec-WebSocket-Version: 13",
  `Sec-WebSocket-Protocol: daml.ws.auth, jwt.token.${token}`,
  "",
  "",
].join("\r\n");

/** One upgrade request on a connection of its own; resolves with the answer's status. */
const one = () =>
  new Promise<string>((resolve) => {
    const socket = connect(gateway.port, "127.0.0.1", () => socket.write(upgradeRequest));
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk.toString("latin1");
      if (head.includes("\r\n\r\n")) socket.destroy();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(head.slice(9, 12) || "none"));
  });
try {
  const { cpuMicrosEach, outcomes } = await measuredCrowd(
    gateway.child.pid as number,
    { warmUp: 2000, count: requests, concurrency: 50 },
    one,
  );
  console.log(
    `upgrade refusal: ${cpuMicrosEach.toFixed(1)} µs gateway CPU a request over ${requests} (statuses ${JSON.stringify(outcomes)})`,
  );
} finally {
  await gateway.stop();
  await sandbox.stop();
}
