import { pino } from "pino";
import { ConfigError, describeKeys, loadConfig } from "./config/load-config.js";
import type { GatewayConfig } from "./config/gateway-config.js";
import { type LedgerAddress, startGateway } from "./gateway.js";
import { startSandboxWorker } from "./sandbox/sandbox-worker.js";

const USAGE = `Usage:
  ledger-json-gateway [--config FILE] [--port N] [--ledger embedded|HOST:PORT] [--<key> VALUE ...]
      Serve the JSON Ledger API v2 (HTTP + WebSocket) in front of a gRPC Ledger API v2.
      --ledger embedded (the default) starts the in-memory sandbox participant with it.
  ledger-json-gateway --help

Settings, lowest precedence first: defaults, the --config file (YAML or JSON, nested or
dotted keys), LEDGER_GATEWAY_* environment variables, command-line flags.

Keys:
`;

async function main(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}${describeKeys()}\n`);
    return;
  }
  let config: GatewayConfig;
  try {
    config = loadConfig({ argv, env: process.env });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ledger-json-gateway: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  await serve(config);
}

async function serve(config: GatewayConfig): Promise<void> {
  const log = pino({ level: config.log.level, base: { service: "ledger-json-gateway" } });
  let ledgerAddress: LedgerAddress;
  let stopSandbox: (() => Promise<void>) | undefined;
  if (config.ledger.kind === "embedded") {
    const sandbox = await startSandboxWorker({ port: config.ledger.sandboxPort });
    stopSandbox = () => sandbox.stop();
    ledgerAddress = { host: "127.0.0.1", port: sandbox.port };
    log.warn({ port: sandbox.port }, "embedded sandbox participant started (unsecured development ledger, loopback only)");
  } else {
    const { host, port, tls } = config.ledger;
    ledgerAddress = tls ? { host, port, tls } : { host, port };
  }
  const gateway = await startGateway(config, ledgerAddress, log);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    await gateway.stop();
    await stopSandbox?.();
    log.info("stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`ledger-json-gateway: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
