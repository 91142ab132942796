/**
 * Where a reconnect storm's start goes, against bare uWebSockets.js (issue 39): storms of N
 * sockets of one token and query (bench/lib/storm-client.ts, no established subscribers), one
 * after another (`--storms`, each closed before the next, after 200 that load the modules), against
 * a one-worker gateway at its default pace, the same gateway unpaced, and the bare reference
 * (bench/lib/bare-storm-server.ts, answering with the gateway's own first frames), a fresh process
 * each, taking turns in rounds. Prints each storm's CPU per start (all threads, /proc schedstat,
 * until every socket had its first frame, as the storm scenario measures), of it the main
 * thread's, and how often per start the main thread went to sleep and was woken (its voluntary
 * context switches): the first storm is a restarted gateway's (V8 compiles the start's code as it
 * goes), the later ones show how much of that a gateway that has seen storms still pays. With `--strace`, then one more
 * storm of each (after 200 and one of N) under `strace -c -f`: system calls per start, by call.
 *
 *   node dist/bench/micro/storm-reference.js [--subscribers 5000] [--storms 4] [--rounds 1] [--strace]
 *
 * `make bench ARGS="--scenario storm"` measures the same reference beside the established
 * subscribers; this one is the gateway alone, short enough to repeat and to trace.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { startBenchClient, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import { firstFrames, measuredStorm, stormQueries } from "../rig/scenarios/storm.js";

const { values } = commandLine("micro/storm-reference.js", {
  subscribers: { type: "string", default: "5000" },
  storms: { type: "string", default: "4" },
  rounds: { type: "string", default: "1" },
  strace: { type: "boolean" },
});
const n = Number(values.subscribers);
const storms = Number(values.storms);
const rounds = Number(values.rounds);

const sandbox = await startSandboxProcess(3, 64, 1);
const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
const queries = stormQueries(sandbox.tickParty, 1);
const crowd = startBenchClient(true, "bench/lib/storm-client");
const bareServer = startBenchClient(true, "bench/lib/bare-storm-server");

/** A storm of `size` against `server`: its CPU per start until every first frame, then closed. */
const storm = (server: Server, size: number) =>
  measuredStorm(crowd, server, { subscribers: size, tokens: [token], queries });

interface Server {
  port: number;
  pid: number;
}

interface Target {
  label: string;
  start(): Promise<Server & { stop(): Promise<void> }>;
}

let frames: string[] | undefined;
const gatewayTarget = (label: string, args: string[]): Target => ({
  label,
  start: async () => {
    const gateway = await startGatewayProcess(sandbox.port, args, { workers: 1, raiseFdLimit: true });
    frames ??= await firstFrames(`ws://127.0.0.1:${gateway.port}/v2/updates`, token, queries[0]);
    return { port: gateway.port, pid: gateway.child.pid as number, stop: gateway.stop };
  },
});
const gatewayTargets = [
  gatewayTarget("gateway, default pace", []),
  gatewayTarget("gateway, unpaced", ["--websocket-config.upgrades-per-second", "0"]),
];
let barePort: number | undefined;
const bareTarget: Target = {
  label: "bare uWS",
  start: async () => {
    if (barePort === undefined) {
      bareServer.send({ kind: "serve", frames });
      barePort = (await bareServer.next<{ port: number }>()).port;
    }
    return { port: barePort, pid: bareServer.child.pid as number, stop: async () => undefined };
  },
};
const targets = [...gatewayTargets, bareTarget];

/** Started, 200 sockets that load its modules, then measured by `measure`. */
async function started<T>(target: Target, measure: (server: Server) => Promise<T>): Promise<T> {
  const running = await target.start();
  try {
    await storm(running, 200);
    return await measure(running);
  } finally {
    await running.stop();
  }
}

for (let round = 1; round <= rounds; round++) {
  for (const target of targets) {
    const figures = await started(target, async (server) => {
      const costs: string[] = [];
      for (let i = 0; i < storms; i++) {
        // The last storm's sockets closed: its teardown is not the next one's.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const cost = await storm(server, n);
        costs.push(
          `${cost.cpuMicrosPerStart} (main ${cost.mainThreadMicrosPerStart}, ${cost.mainThreadSleepsPerStart} sleeps)`,
        );
      }
      return costs;
    });
    console.log(
      `round ${round}, ${target.label.padEnd(22)} µs CPU per start (of it the main thread's, and its sleeps per start), storm by storm (N = ${n}): ${figures.join(", ")}`,
    );
  }
}

if (values.strace)
  for (const target of targets) {
    const calls = await started(target, async (server) => {
      await storm(server, n);
      const tracer = spawn("strace", ["-c", "-f", "-p", String(server.pid)], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      tracer.once("error", (error) => {
        console.error(`--strace: ${error.message} (Debian: apt-get install strace)`);
        process.exit(2);
      });
      let summary = "";
      tracer.stderr.on("data", (chunk: Buffer) => {
        summary += chunk.toString("utf8");
      });
      // strace attaches to every thread before the storm begins.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await storm(server, n);
      tracer.kill("SIGINT");
      await once(tracer, "exit");
      return summary;
    });
    console.log(`${target.label}: system calls per warm start (N = ${n}, strace -c -f)`);
    for (const line of calls.split("\n")) {
      // % time, seconds, usecs/call, calls, [errors,] syscall
      const fields = line.trim().split(/\s+/);
      const count = Number(fields[3]);
      if (fields.length >= 5 && Number.isFinite(count) && /^[\d.]+$/.test(fields[0] ?? ""))
        console.log(`  ${(count / n).toFixed(2).padStart(6)}  ${fields.at(-1)}`);
    }
  }

await crowd.stop();
await bareServer.stop();
await sandbox.stop();
