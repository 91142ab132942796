import { SAMPLE_PACKAGE_ID } from "../../../src/sandbox/sample-package/index.js";
import { DirectLedger } from "../../lib/grpc-direct.js";
import { BenchHttpClient } from "../../lib/http-client.js";
import { processCpuSeconds } from "../../lib/proc-stats.js";
import { percentile, round, secondsSince } from "../../lib/stats.js";
import { tickCommands } from "../../lib/tick-commands.js";

/**
 * submit-and-wait latency and throughput at a fixed concurrency: `concurrency` clients each
 * creating Bench:Tick contracts back to back, directly over gRPC and through the gateway's
 * JSON endpoint, in one run. Each path's window follows its warm-up and holds its `commands`
 * only; the gateway should be one of its own, which has answered nothing else (bench/rig/run.ts).
 * The clients are what a Node service would use: grpc-js for the direct path
 * (bench/lib/grpc-direct.ts) and node:http with keep-alive for the gateway
 * (bench/lib/http-client.ts).
 */
export interface SubmitAndWaitResult {
  commands: number;
  concurrency: number;
  /** Commands each path answered, at `concurrency`, before its window. */
  warmUp: number;
  directGrpc: Figures;
  gateway: Figures;
  ratioToDirect: { throughput: number; p50: number; p99: number };
  /** The gateway process's CPU over its measured window / commands, when its pid was given. */
  gatewayCpuMsPerCommand?: number;
  /**
   * With the sandbox's pid: every process's CPU per command in each path's window (µs). On 2
   * cores shared by all of them, a CPU-bound run's throughput ratio is at most about
   * direct total / gateway total: what the ledger and the clients cost sets how close the
   * gateway's ratio can come to 1, whatever the gateway costs.
   */
  cpuMicrosPerCommand?: {
    direct: { sandbox: number; client: number; total: number };
    gateway: { sandbox: number; gateway: number; client: number; total: number };
  };
}

export interface Figures {
  commandsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface SubmitAndWaitSetup {
  sandboxPort: number;
  gatewayPort: number;
  party: string;
  token: string;
  commands: number;
  concurrency: number;
  /** The gateway's process: its CPU over the gateway's window is reported per command. */
  gatewayPid?: number;
  /** The sandbox's process: with the gateway's, every process's CPU per command is reported. */
  sandboxPid?: number;
  /**
   * Commands sent on each path, at `concurrency`, before its measured window. A fresh gateway's
   * CPU per command falls some 4x over its first 2000-3000 (V8 optimizing its hot code: it stays
   * flat under `--no-opt`), so a window that starts earlier measures mostly the warm-up.
   */
  warmUp: number;
  /** Called with a line per quarter of the commands and per finished client, as the bench runs. */
  progress?: (line: string) => void;
}

/** `total` calls of `submit` by `concurrency` loops back to back: their rate and latencies. */
export async function measure(
  total: number,
  concurrency: number,
  submit: (i: number) => Promise<void>,
  progress: (done: number) => void = () => undefined,
): Promise<Figures> {
  const latencies: number[] = [];
  const quarter = Math.max(1, Math.floor(total / 4));
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = process.hrtime.bigint();
        await submit(i);
        latencies.push(secondsSince(t0) * 1000);
        if (latencies.length % quarter === 0 && latencies.length < total) progress(latencies.length);
      }
    }),
  );
  const seconds = secondsSince(started);
  latencies.sort((a, b) => a - b);
  return {
    commandsPerSecond: Math.round(total / seconds),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
  };
}

/** CPU seconds of the processes a window is read from; undefined pids read as 0. */
function cpuNow(pids: { sandbox?: number; gateway?: number }) {
  const client = process.cpuUsage();
  return {
    sandbox: pids.sandbox === undefined ? 0 : processCpuSeconds(pids.sandbox),
    gateway: pids.gateway === undefined ? 0 : processCpuSeconds(pids.gateway),
    client: (client.user + client.system) / 1e6,
  };
}

type Cpu = ReturnType<typeof cpuNow>;

/** µs per command of each process between two readings. */
function perCommand(before: Cpu, after: Cpu, commands: number) {
  const micros = (key: keyof Cpu) => round(((after[key] - before[key]) * 1e6) / commands, 1);
  return { sandbox: micros("sandbox"), gateway: micros("gateway"), client: micros("client") };
}

export async function submitAndWait(setup: SubmitAndWaitSetup): Promise<SubmitAndWaitResult> {
  const { party, token } = setup;
  const direct = new DirectLedger(setup.sandboxPort, token);
  const http = new BenchHttpClient(`http://127.0.0.1:${setup.gatewayPort}`, setup.concurrency);
  const payload = "x".repeat(64);
  const run = `${process.pid}-${Date.now()}`;
  const pids = { sandbox: setup.sandboxPid, gateway: setup.gatewayPid };

  const report = (client: string) => (done: number) =>
    setup.progress?.(`${client}: ${done}/${setup.commands} commands`);
  const directCommand = (i: number) =>
    direct.submitAndWait({
      commands: {
        commandId: `bench-direct-${run}-${i}`,
        actAs: [party],
        commands: [
          {
            create: {
              templateId: { packageId: SAMPLE_PACKAGE_ID, moduleName: "Bench", entityName: "Tick" },
              createArguments: {
                fields: [{ value: { party } }, { value: { int64: String(i) } }, { value: { text: payload } }],
              },
            },
          },
        ],
      },
    });
  const { warmUp, concurrency } = setup;
  // Negative numbers: warm-up commands have ids of their own.
  await measure(warmUp, concurrency, (i) => directCommand(-1 - i));
  const directBefore = cpuNow(pids);
  const directFigures = await measure(setup.commands, concurrency, directCommand, report("direct gRPC"));
  const directCpu = perCommand(directBefore, cpuNow(pids), setup.commands);
  setup.progress?.(
    `direct gRPC: ${directFigures.commandsPerSecond} commands/s, p99 ${directFigures.p99Ms} ms`,
  );

  const gatewayCommand = async (i: number) => {
    await http.ok("/v2/commands/submit-and-wait", {
      token,
      body: JSON.stringify(tickCommands(`bench-gateway-${run}-${i}`, party, i)),
    });
  };
  await measure(warmUp, concurrency, (i) => gatewayCommand(-1 - i));
  const gatewayBefore = cpuNow(pids);
  const gateway = await measure(setup.commands, concurrency, gatewayCommand, report("gateway"));
  const gatewayCpu = perCommand(gatewayBefore, cpuNow(pids), setup.commands);
  const gatewayCpuMsPerCommand =
    setup.gatewayPid === undefined ? undefined : round(gatewayCpu.gateway / 1000, 3);
  setup.progress?.(
    `gateway: ${gateway.commandsPerSecond} commands/s, p99 ${gateway.p99Ms} ms` +
      (gatewayCpuMsPerCommand === undefined ? "" : `, ${gatewayCpuMsPerCommand} ms gateway CPU per command`),
  );
  direct.close();
  http.close();
  const sum = (...micros: number[]) =>
    round(
      micros.reduce((a, b) => a + b, 0),
      1,
    );
  return {
    commands: setup.commands,
    concurrency,
    warmUp,
    directGrpc: directFigures,
    gateway,
    ratioToDirect: {
      throughput: round(gateway.commandsPerSecond / directFigures.commandsPerSecond, 3),
      p50: round(gateway.p50Ms / directFigures.p50Ms, 3),
      p99: round(gateway.p99Ms / directFigures.p99Ms, 3),
    },
    ...(gatewayCpuMsPerCommand !== undefined && { gatewayCpuMsPerCommand }),
    ...(setup.sandboxPid !== undefined &&
      setup.gatewayPid !== undefined && {
        cpuMicrosPerCommand: {
          direct: {
            sandbox: directCpu.sandbox,
            client: directCpu.client,
            total: sum(directCpu.sandbox, directCpu.client),
          },
          gateway: { ...gatewayCpu, total: sum(gatewayCpu.sandbox, gatewayCpu.gateway, gatewayCpu.client) },
        },
      }),
  };
}
