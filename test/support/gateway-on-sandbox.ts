import { pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { IN_PROCESS_GATEWAY } from "./in-process-gateway.js";
import type { SandboxProcess } from "./sandbox-process.js";
import { tokenFor } from "./tokens.js";

/**
 * A gateway in this process in front of a sandbox process started with
 * `--preload ticks=N,party=<hint>`, and the preloaded ticks' owner: the preload allocates it on
 * the participant's own namespace, which only the participant id tells. `ledgerPort` puts
 * something between them (a fault proxy); `args` are gateway flags.
 */
export async function gatewayOnSandbox(
  sandbox: SandboxProcess,
  hint: string,
  options: { ledgerPort?: number; args?: readonly string[] } = {},
): Promise<{ gateway: RunningGateway; party: string }> {
  const gateway = await startGateway(
    loadConfig({ argv: ["--port", "0", ...(options.args ?? [])], env: {} }),
    { host: "127.0.0.1", port: options.ledgerPort ?? sandbox.port },
    pino({ level: "silent" }),
    IN_PROCESS_GATEWAY,
  );
  const { participantId } = (await (
    await fetch(`http://127.0.0.1:${gateway.port}/v2/parties/participant-id`, {
      headers: { authorization: `Bearer ${tokenFor()}` },
    })
  ).json()) as { participantId: string };
  return { gateway, party: `${hint}::${participantId.split("::")[1]}` };
}
