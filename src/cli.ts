import { parseArgs } from "node:util";
import { pino } from "pino";
import { mintToken } from "./auth/mint-token.js";
import type { GatewayConfig } from "./config/gateway-config.js";
import { ConfigError, describeKeys, loadConfig } from "./config/load-config.js";
import { type LedgerAddress, startGateway } from "./gateway.js";

const USAGE = `Usage:
  ledger-json-gateway [--config FILE] [--port N] [--ledger embedded|HOST:PORT] [--<key> VALUE ...]
      Serve the JSON Ledger API v2 (HTTP + WebSocket) in front of a gRPC Ledger API v2.
      --ledger embedded (the default) starts the in-memory sandbox participant with it.
  ledger-json-gateway token [--user ID] [--secret S] [--expires SECONDS]
      Print a Ledger API token (HS256) for the user (default participant_admin).
  ledger-json-gateway --help

Settings, lowest precedence first: defaults, the --config file (YAML or JSON, nested or
dotted keys), LEDGER_GATEWAY_* environment variables, command-line flags.

Keys:
`;

async function main(argv: string[]): Promise<void> {
  if (argv[0] === "token") {
    process.stdout.write(`${tokenCommand(argv.slice(1))}\n`);
    return;
  }
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

function tokenCommand(args: string[]): string {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: "string", default: "participant_admin" },
      secret: { type: "string", default: "secret" },
      expires: { type: "string", default: "86400" },
    },
  });
  const expiresInSeconds = Number(values.expires);
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds <= 0) {
    throw new ConfigError(`--expires takes a positive number of seconds, got ${values.expires}`);
  }
  return mintToken({ user: values.user as string, secret: values.secret as string, expiresInSeconds });
}

async function serve(config: GatewayConfig): Promise<void> {
  const log = pino({ level: config.log.level, base: { service: "ledger-json-gateway" } });
  let ledgerAddress: LedgerAddress;
  let stopSandbox: (() => Promise<void>) | undefined;
  if (config.ledger.kind === "embedded") {
    // Loaded only when needed: a gateway in front of a real participant never loads the sandbox.
    const { startSandboxWorker } = await import("./sandbox/sandbox-worker.js");
    const sandbox = await startSandboxWorker({ port: config.ledger.sandboxPort });
    stopSandbox = () => sandbox.stop();
    ledgerAddress = { host: "127.0.0.1", port: sandbox.port };
    log.warn(
      { port: sandbox.port },
      "embedded sandbox participant started (unsecured development ledger, loopback only)",
    );
  } else {
    const { host, port, tls } = config.ledger;
    ledgerAddress = tls ? { host, port, tls } : { host, port };
  }
  const gateway = await startGateway(config, ledgerAddress, log);
  if (config.ledger.kind === "embedded") {
    // A first request to copy: stderr, so stdout stays one JSON log entry per line.
    const token = mintToken({ user: "participant_admin", secret: "secret", expiresInSeconds: 86_400 });
    const base = `http://${config.server.address}:${gateway.port}${config.server.pathPrefix}`;
    process.stderr.write(
      `\nAdmin token (participant_admin, 24 h):\n  ${token}\nTry:\n  curl -H 'Authorization: Bearer ${token}' ${base}/v2/version\n\n`,
    );
  }

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
  if (error instanceof ConfigError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`ledger-json-gateway: ${(error as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `ledger-json-gateway: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
