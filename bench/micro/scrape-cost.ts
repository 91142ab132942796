/**
 * What a Prometheus scrape of /metrics costs a gateway worker's event loop while N subscribers are
 * open (the lag gauges read every open socket; process_open_fds counts every descriptor): a
 * sandbox, a one-worker gateway, N WebSockets on `/v2/updates` from offset 0 on one token
 * (bench/lib/storm-client.ts, each with its first frame), then `--scrapes` scrapes one after
 * another; prints the gateway's main-thread CPU per scrape (/proc schedstat: the time the event
 * loop was held, every stream's elements waiting meanwhile) and the body's size. `--subscribers 0`
 * is the empty gateway's scrape.
 *
 *   npm run -s build && node dist/bench/micro/scrape-cost.js [--subscribers 10000] [--scrapes 20]
 */
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { mainThreadRun } from "../lib/proc-stats.js";
import { startBenchClient, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { StormAnswer } from "../lib/storm-client.js";
import { stormQueries } from "../rig/scenarios/storm.js";

const { values } = commandLine("micro/scrape-cost.js", {
  subscribers: { type: "string", default: "10000" },
  scrapes: { type: "string", default: "20" },
});
const n = Number(values.subscribers);
const scrapes = Number(values.scrapes);

const sandbox = await startSandboxProcess(3, 64, 1);
const gateway = await startGatewayProcess(sandbox.port, [], { workers: 1, raiseFdLimit: true });
const crowd = startBenchClient(true, "bench/lib/storm-client");
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const pid = gateway.child.pid as number;
/** Subscribers whose start failed (a socket lost in its corked upgrade: uWebSockets#1929). */
let failed = 0;
const scrape = async (): Promise<number> =>
  (await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text()).length;
try {
  if (n > 0) {
    crowd.send({
      kind: "storm",
      url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
      tokens: [token],
      requests: stormQueries(sandbox.tickParty, 1),
      n,
    });
    failed = (await crowd.next<StormAnswer>()).failed;
  }
  // The crowd's start settles, and a first scrape builds what later ones reuse.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await scrape();
  const before = mainThreadRun(pid);
  let bytes = 0;
  for (let i = 0; i < scrapes; i++) bytes = await scrape();
  const after = mainThreadRun(pid);
  const ms = ((after.cpuSeconds - before.cpuSeconds) * 1000) / scrapes;
  console.log(
    `${n - failed} subscribers open${failed > 0 ? ` (${failed} failed to start)` : ""}: ${ms.toFixed(2)} ms of the gateway's main thread per scrape (${scrapes} scrapes, ${bytes} bytes each)`,
  );
} finally {
  if (n > 0) {
    crowd.send({ kind: "close" });
    await crowd.next();
  }
  await crowd.stop();
  await gateway.stop();
  await sandbox.stop();
}
