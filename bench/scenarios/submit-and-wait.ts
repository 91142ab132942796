import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { SAMPLE_PACKAGE_ID } from "../../src/sandbox/sample-package/index.js";
import { processCpuSeconds } from "../lib/proc-stats.js";
import { percentile, round, secondsSince } from "../lib/stats.js";

/**
 * submit-and-wait latency and throughput at a fixed concurrency: `concurrency` clients each
 * creating Bench:Tick contracts back to back, directly over gRPC and through the gateway's
 * JSON endpoint, in one run. Each path's window follows its warm-up and holds its `commands`
 * only; the gateway should be one of its own, which has answered nothing else (bench/run.ts).
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

export async function submitAndWait(setup: SubmitAndWaitSetup): Promise<SubmitAndWaitResult> {
  const { party, token } = setup;
  const ledger = new LedgerClient({ target: `127.0.0.1:${setup.sandboxPort}`, deadlineMs: 60_000 });
  const payload = "x".repeat(64);
  const run = `${process.pid}-${Date.now()}`;

  const report = (client: string) => (done: number) =>
    setup.progress?.(`${client}: ${done}/${setup.commands} commands`);
  const directCommand = async (i: number) => {
    await ledger.unary(
      "CommandService",
      "SubmitAndWait",
      {
        commands: {
          commandId: `bench-direct-${run}-${i}`,
          actAs: [party],
          commands: [
            {
              create: {
                templateId: { packageId: SAMPLE_PACKAGE_ID, moduleName: "Bench", entityName: "Tick" },
                createArguments: {
                  fields: [
                    { value: { party } },
                    { value: { int64: String(i) } },
                    { value: { text: payload } },
                  ],
                },
              },
            },
          ],
        },
      },
      token,
    );
  };
  const { warmUp, concurrency } = setup;
  // Negative numbers: warm-up commands have ids of their own.
  await measure(warmUp, concurrency, (i) => directCommand(-1 - i));
  const direct = await measure(setup.commands, concurrency, directCommand, report("direct gRPC"));
  setup.progress?.(`direct gRPC: ${direct.commandsPerSecond} commands/s, p99 ${direct.p99Ms} ms`);

  const url = `http://127.0.0.1:${setup.gatewayPort}/v2/commands/submit-and-wait`;
  const gatewayCommand = async (i: number) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({
        commandId: `bench-gateway-${run}-${i}`,
        actAs: [party],
        commands: [
          {
            CreateCommand: {
              templateId: "#gateway-samples:Bench:Tick",
              createArguments: { owner: party, seq: String(i), payload },
            },
          },
        ],
      }),
    });
    if (res.status !== 200) throw new Error(`submit-and-wait answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };
  await measure(warmUp, concurrency, (i) => gatewayCommand(-1 - i));
  const cpuBefore = setup.gatewayPid === undefined ? 0 : processCpuSeconds(setup.gatewayPid);
  const gateway = await measure(setup.commands, concurrency, gatewayCommand, report("gateway"));
  const gatewayCpuMsPerCommand =
    setup.gatewayPid === undefined
      ? undefined
      : round(((processCpuSeconds(setup.gatewayPid) - cpuBefore) * 1000) / setup.commands, 3);
  setup.progress?.(
    `gateway: ${gateway.commandsPerSecond} commands/s, p99 ${gateway.p99Ms} ms` +
      (gatewayCpuMsPerCommand === undefined ? "" : `, ${gatewayCpuMsPerCommand} ms gateway CPU per command`),
  );
  ledger.close();
  return {
    commands: setup.commands,
    concurrency,
    warmUp,
    directGrpc: direct,
    gateway,
    ratioToDirect: {
      throughput: round(gateway.commandsPerSecond / direct.commandsPerSecond, 3),
      p50: round(gateway.p50Ms / direct.p50Ms, 3),
      p99: round(gateway.p99Ms / direct.p99Ms, 3),
    },
    ...(gatewayCpuMsPerCommand !== undefined && { gatewayCpuMsPerCommand }),
  };
}
