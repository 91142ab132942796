/**
 * What N open, idle subscribers cost a gateway worker each second (issue 39: a reconnect storm's
 * first sockets are kept while the rest start, and a paced storm of 10,000 lasts some 10 s): a
 * sandbox, a one-worker gateway at its defaults, N WebSockets on `/v2/updates` from offset 0 on
 * one token (bench/lib/storm-client.ts, each with its first frame), then, once the start's
 * collections have settled, the gateway's CPU over `--seconds` with nothing delivered: the
 * keep-alive pings (websocket-config.ping-interval) and each subscriber's re-check of its token
 * with the ledger (stream-authorization-recheck-interval). Before the crowd opens, the same
 * gateway's own floor over as long (no subscribers: its timers, prom-client's event-loop-delay
 * sampler among them). Prints all threads' CPU (/proc schedstat) and the main thread's, in ms a
 * second, and above the floor in µs a subscriber-second, `--rounds` times.
 *
 *   npm run -s build && node dist/bench/micro/idle-upkeep.js [--subscribers 5000] [--seconds 20] [--rounds 1]
 *     [--gateway="--websocket-config.ping-interval 0s"]
 *
 * `--gateway`: the gateway's own arguments, space-separated, to tell the causes apart (pings off,
 * re-checks off).
 */
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { mainThreadRun, threadsCpuSeconds } from "../lib/proc-stats.js";
import { startBenchClient, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { StormAnswer } from "../lib/storm-client.js";
import { stormQueries } from "../rig/scenarios/storm.js";

const { values } = commandLine("micro/idle-upkeep.js", {
  subscribers: { type: "string", default: "5000" },
  seconds: { type: "string", default: "20" },
  rounds: { type: "string", default: "1" },
  gateway: { type: "string", default: "" },
});
const n = Number(values.subscribers);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const gatewayArgs = values.gateway.split(" ").filter((arg) => arg !== "");
/** After the crowd's start: its young objects promoted, the old generation's marking and sweeping done. */
const SETTLE_MS = 5000;

const sandbox = await startSandboxProcess(3, 64, 1);
const crowd = startBenchClient(true, "bench/lib/storm-client");
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  for (let round = 1; round <= rounds; round++) {
    const gateway = await startGatewayProcess(sandbox.port, gatewayArgs, { workers: 1, raiseFdLimit: true });
    const pid = gateway.child.pid as number;
    const cpuOver = async (): Promise<{ all: number; main: number }> => {
      const all = threadsCpuSeconds(pid);
      const main = mainThreadRun(pid).cpuSeconds;
      await sleep(seconds * 1000);
      return {
        all: (threadsCpuSeconds(pid) - all) / seconds,
        main: (mainThreadRun(pid).cpuSeconds - main) / seconds,
      };
    };
    try {
      await sleep(SETTLE_MS);
      const floor = await cpuOver();
      crowd.send({
        kind: "storm",
        url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
        tokens: [token],
        requests: stormQueries(sandbox.tickParty, 1),
        n,
      });
      const open = n - (await crowd.next<StormAnswer>()).failed;
      await sleep(SETTLE_MS);
      const idle = await cpuOver();
      const ms = (s: number) => (s * 1000).toFixed(2);
      const perSubscriber = (s: number) => ((s * 1e6) / open).toFixed(2);
      console.log(
        `round ${round}: no subscribers ${ms(floor.all)} ms a second (main thread ${ms(floor.main)}); ${open} idle subscribers ${ms(idle.all)} (main ${ms(idle.main)}): ${perSubscriber(idle.all - floor.all)} µs a subscriber-second above the floor (main ${perSubscriber(idle.main - floor.main)}), each over ${seconds} s`,
      );
      crowd.send({ kind: "close" });
      await crowd.next();
    } finally {
      await gateway.stop();
    }
  }
} finally {
  await crowd.stop();
  await sandbox.stop();
}
