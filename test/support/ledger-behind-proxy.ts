import type { RunningGateway } from "../../src/gateway.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";
import { gatewayOnSandbox } from "./gateway-on-sandbox.js";
import { type SandboxProcess, startSandboxProcess } from "./sandbox-process.js";

/**
 * A ledger whose connection a test can take away: a sandbox preloaded with `ticks` ticks of the
 * party `hint`, a gateway that reaches it through a fault proxy, and a second gateway straight on
 * the sandbox to submit through while the first one's connection is down.
 */
export interface LedgerBehindProxy {
  readonly sandbox: SandboxProcess;
  readonly proxy: FaultProxy;
  readonly gateway: RunningGateway;
  readonly direct: RunningGateway;
  readonly party: string;
  stop(): Promise<void>;
}

export async function ledgerBehindProxy(hint: string, ticks: number): Promise<LedgerBehindProxy> {
  let sandbox: SandboxProcess | undefined;
  let proxy: FaultProxy | undefined;
  let gateway: RunningGateway | undefined;
  let direct: RunningGateway | undefined;
  // What started is stopped, also when a later part fails to start.
  const stop = async () => {
    await gateway?.stop(1_000);
    await direct?.stop(1_000);
    await proxy?.close();
    await sandbox?.kill();
  };
  try {
    sandbox = await startSandboxProcess({ args: ["--preload", `ticks=${ticks},party=${hint}`] });
    proxy = await startFaultProxy({ targetPort: sandbox.port });
    const behind = await gatewayOnSandbox(sandbox, hint, { ledgerPort: proxy.port });
    gateway = behind.gateway;
    direct = (await gatewayOnSandbox(sandbox, hint)).gateway;
    return { sandbox, proxy, gateway, direct, party: behind.party, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
