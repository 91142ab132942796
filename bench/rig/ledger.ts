import { mintToken } from "../../src/jwt/mint-token.js";
import { type RunningSandbox, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { LocalOptions } from "./options.js";
import type { GatewayProcess } from "./scenarios/update-stream.js";

/**
 * What every scenario of `load.js local` shares: its options, its progress lines (with the time
 * since the start: the comparison takes minutes), and the gateways' `node --cpu-prof` flags.
 */
export interface LocalBench {
  options: LocalOptions;
  progress(phase: string): (line: string) => void;
  /** `--gateway-cpu-prof DIR`: every gateway runs under `node --cpu-prof`. */
  cpuProfArgs: string[];
}

export function localBench(options: LocalOptions, log: (line: string) => void): LocalBench {
  const origin = process.hrtime.bigint();
  return {
    options,
    progress: (phase) => (line) => {
      const seconds = Number(process.hrtime.bigint() - origin) / 1e9;
      log(`[${seconds.toFixed(1).padStart(6)} s] ${phase}: ${line}`);
    },
    cpuProfArgs:
      options.gatewayCpuProf === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.gatewayCpuProf],
  };
}

/**
 * A preloaded sandbox, and the token of its ticks' owner (`actAs-<party>`: the unsecured sandbox
 * checks rights, not signatures).
 */
export interface Ledger {
  sandbox: RunningSandbox;
  token: string;
}

/** A token of the sandbox's ticks' owner. */
export const tickOwnerToken = (sandbox: RunningSandbox) =>
  mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });

/** A sandbox of `--ticks` for the length of `body`, which starts the gateways it measures in front of it. */
export async function withSandbox<T>(
  bench: LocalBench,
  perTransaction: number,
  body: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const { ticks, payloadBytes } = bench.options;
  const say = bench.progress(`set-up ${perTransaction}/tx`);
  say(`starting the sandbox, preloading ${ticks} ticks of ${payloadBytes} B ...`);
  const sandbox = await startSandboxProcess(ticks, payloadBytes, perTransaction);
  say(`sandbox ready (offsets up to ${sandbox.lastOffset})`);
  try {
    return await body({ sandbox, token: tickOwnerToken(sandbox) });
  } finally {
    await sandbox.stop();
  }
}

/** A fresh gateway in front of `ledger` for the length of `body`: what it measures is all it answers. */
export async function withGateway<T>(
  bench: LocalBench,
  ledger: Ledger,
  body: (gateway: GatewayProcess) => Promise<T>,
): Promise<T> {
  // One list-twin answer holds the whole range, as the WebSocket does.
  const gateway = await startGatewayProcess(
    ledger.sandbox.port,
    ["--websocket-config.http-list-max-elements-limit", String(bench.options.ticks + 1000)],
    { nodeArgs: bench.cpuProfArgs },
  );
  try {
    return await body({ port: gateway.port, pid: gateway.child.pid as number });
  } finally {
    await gateway.stop();
  }
}
