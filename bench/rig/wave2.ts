import {
  type RunningSandbox,
  startBenchClient,
  startGatewayProcess,
  startSandboxProcess,
} from "../lib/processes.js";
import type { Wave2Result } from "../lib/results.js";
import { type LocalBench, tickOwnerToken } from "./ledger.js";
import {
  type FanoutPoint,
  fanoutPoint,
  type GatewayUnderTest,
  idleConnections,
  streamLoad,
  UPSTREAM_CALLS_SOURCE,
  updatesRequest,
  type WorkersPoint,
} from "./scenarios/fanout.js";

const MIN_FANOUT_ELEMENTS = 200;

/**
 * fanout, ws-compression, idle, workers (bench v2): one sandbox of `--fanout-ticks`, a gateway
 * per scenario (per point for workers), and the clients in a process of their own
 * (bench/lib/bench-client.ts), so that the gateway's CPU from /proc is its own.
 */
export async function wave2(bench: LocalBench): Promise<Wave2Result | undefined> {
  const o = bench.options;
  const runs = (name: "fanout" | "idle" | "workers" | "ws-compression") => o.scenarios.has(name);
  if (!runs("fanout") && !runs("idle") && !runs("workers") && !runs("ws-compression")) return undefined;
  const say = bench.progress("wave 2");
  say(`starting the sandbox, preloading ${o.fanoutTicks} ticks of ${o.payloadBytes} B ...`);
  const sandbox = await startSandboxProcess(o.fanoutTicks, o.payloadBytes, 1);
  const token = tickOwnerToken(sandbox);
  const client = startBenchClient(true);
  // More client processes for larger crowds (10,000 sockets and their frames would bound one
  // before the gateway), started as a point first needs them.
  const clients = [client];
  const clientsFor = (subscribers: number) => {
    const needed = Math.ceil(subscribers / o.fanoutSocketsPerClient);
    while (clients.length < needed) clients.push(startBenchClient(true));
    return clients.slice(0, needed);
  };
  const withGateway = async <T>(
    workers: number,
    body: (gateway: GatewayUnderTest) => Promise<T>,
    ledger: RunningSandbox = sandbox,
    args: string[] = [],
  ) => {
    const running = await startGatewayProcess(
      ledger.port,
      ["--websocket-config.http-list-max-elements-limit", String(o.fanoutTicks + 1000), ...args],
      { workers, raiseFdLimit: true, nodeArgs: bench.cpuProfArgs },
    );
    try {
      return await body({
        port: running.port,
        pid: running.child.pid as number,
        token,
        metrics: async () => (await fetch(`http://127.0.0.1:${running.port}/metrics`)).text(),
      });
    } finally {
      await running.stop();
    }
  };
  const result: Wave2Result = {};
  try {
    if (runs("fanout")) {
      result.fanout = await withGateway(1, async (gateway) => {
        say("fanout: warm-up (10 subscribers, 1000 elements) ...");
        await fanoutPoint(client, gateway, sandbox.tickParty, sandbox.lastOffset, 10, 1000);
        const points: FanoutPoint[] = [];
        for (const n of o.subscribers) {
          const replay = o.fanoutReplay;
          // At least MIN_FANOUT_ELEMENTS each: at N = 10,000 the budget's 20 would measure the
          // upgrades, not the deliveries.
          const elements = replay
            ? sandbox.lastOffset
            : Math.min(sandbox.lastOffset, Math.max(MIN_FANOUT_ELEMENTS, Math.floor(o.deliveries / n)));
          const point = {
            ...(await fanoutPoint(
              clientsFor(n),
              gateway,
              sandbox.tickParty,
              sandbox.lastOffset,
              n,
              elements,
            )),
            ...(replay && { replay: true }),
          };
          say(
            `fanout${replay ? " replay" : ""} N=${n} x ${elements} elements: ${point.deliveriesPerSecond} deliveries/s, ` +
              `${point.gatewayCpuMicrosPerDelivery} µs gateway CPU per delivery, ${point.upstreamStreams} upstream streams ` +
              `(catch-ups ${JSON.stringify(point.catchUps)}, ${point.detaches} detaches, ${point.handovers} handovers), ` +
              `${point.admissionProbes} admission probes, ${point.getUpdatesCalls} GetUpdates calls` +
              (point.errors > 0 ? `, ${point.errors} sockets not closed 1000` : ""),
          );
          points.push(point);
        }
        return { upstreamCallsCountedBy: UPSTREAM_CALLS_SOURCE, gatewayWorkers: 1, points };
      });
    }
    if (runs("ws-compression")) {
      // Subscribers that offer permessage-deflate, against a gateway that declines it (off) and
      // one that accepts it (on): bytes, CPU and memory per delivery and per connection.
      result.wsCompression = {};
      for (const mode of ["off", "on"] as const) {
        result.wsCompression[mode] = await withGateway(
          1,
          async (gateway) => {
            say(`ws-compression ${mode}: warm-up (10 subscribers, 1000 elements) ...`);
            await fanoutPoint(client, gateway, sandbox.tickParty, sandbox.lastOffset, 10, 1000, true);
            const points: FanoutPoint[] = [];
            // N=100 reads 1000 elements: within the shared stream's history (1024), so that every
            // subscriber reads the one shared call; past it late joiners catch up on calls of their
            // own, which measures issue 23's replay crowd, not compression.
            for (const [n, elements] of [
              [1, Math.min(sandbox.lastOffset, 20_000)],
              [100, Math.min(sandbox.lastOffset, 1_000)],
            ] as const) {
              const point = await fanoutPoint(
                client,
                gateway,
                sandbox.tickParty,
                sandbox.lastOffset,
                n,
                elements,
                true,
              );
              const c = point.compression;
              say(
                `ws-compression ${mode} N=${n} x ${elements}: ${point.gatewayCpuMicrosPerDelivery} µs gateway CPU per delivery, ` +
                  `${c?.wireBytesPerDelivery} B on the wire per delivery (text ${c?.textBytesPerDelivery} B), ` +
                  `${c?.rssPerConnectionBytes} B RSS per connection, peak RSS +${Math.round((c?.peakRssGrowthBytes ?? 0) / 1024)} KiB`,
              );
              points.push(point);
            }
            return points;
          },
          sandbox,
          ["--websocket-config.compression", mode],
        );
      }
    }
    if (runs("idle")) {
      say(`idle: ${o.idleConnections} idle WebSocket connections ...`);
      result.idleConnections = await withGateway(1, (gateway) =>
        idleConnections(client, gateway, o.idleConnections),
      );
      say(`idle: ${result.idleConnections.rssPerConnectionBytes} B resident per connection`);
    }
    if (runs("workers")) {
      say(`workers: a second sandbox, ${o.workersTicks} ticks in transactions of ${o.workersBatch} ...`);
      const batched = await startSandboxProcess(o.workersTicks, o.payloadBytes, o.workersBatch);
      try {
        // The whole preloaded range, bounded: every stream is its own call (never shared).
        const range = updatesRequest(batched.tickParty, 0, batched.lastOffset);
        const scenario =
          `WebSocket /v2/updates of ${o.workersTicks / o.workersBatch} transactions of ${o.workersBatch} events (bounded, read to the end), ` +
          `${o.workersConcurrency} client loops, ${o.workersSeconds} s`;
        const points: WorkersPoint[] = [];
        for (const workers of [1, 2]) {
          say(`workers: ${workers} worker(s), ${scenario} ...`);
          const point = await withGateway(
            workers,
            (gateway) =>
              streamLoad(
                client,
                gateway,
                workers,
                batched.child.pid as number,
                range,
                o.workersConcurrency,
                o.workersSeconds,
              ),
            batched,
          );
          say(
            `workers ${workers}: ${point.framesPerSecond} transactions/s, CPU s gateway ${point.gatewayCpuSeconds} ` +
              `sandbox ${point.sandboxCpuSeconds} client ${point.clientCpuSeconds} in ${point.seconds} s`,
          );
          points.push(point);
        }
        result.workers = { scenario, points };
      } finally {
        await batched.stop();
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox.stop();
  }
  return result;
}
