import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { GatewayConfig } from "./config/gateway-config.js";
import {
  CommandLineError,
  ConfigError,
  describeKeys,
  loadConfig,
  parseDuration,
} from "./config/load-config.js";
import { didYouMean, nearestNames } from "./config/nearest-name.js";
import {
  checkAddressFree,
  type HeldPort,
  holdGatewayPort,
  type LedgerAddress,
  ListenError,
  startGateway,
} from "./gateway.js";
import { mintToken, type SigningAlgorithm } from "./jwt/mint-token.js";
import { readVerificationFiles } from "./jwt/token-verifier.js";
import { projectRoot } from "./proto/project-root.js";
import { gatewayLogger } from "./workers/gateway-logger.js";
import { startGatewayWorkers } from "./workers/gateway-workers.js";

const TOKEN_USAGE = `  ledger-json-gateway token [--user ID] [--secret S] [--expires-in DURATION] [--alg HS256|RS256|ES256]
                           [--key PRIVATE_KEY_PEM_FILE] [--audience AUD] [--issuer ISS] [--kid KID]
      Print a Ledger API token for the user (default participant_admin): HS256 with the secret,
      or RS256/ES256 with the private key.
  ledger-json-gateway token --help
`;

const TOKEN_HELP = `Usage:
${TOKEN_USAGE}
Options:
  --user ID         user id of the token (sub claim); default participant_admin
  --secret S        HS256 secret; default "secret" (what the embedded sandbox's unsafe mode accepts)
  --expires-in D    lifetime, e.g. 90s, 5m, 8h; default 5m: Canton's max-token-lifetime, the longest
                    a participant (and this sandbox in its verifying modes) accepts by default
  --expires SECONDS the lifetime in seconds instead
  --alg ALG         HS256 (default), RS256 or ES256
  --key FILE        PEM private key, for RS256 and ES256
  --audience AUD    aud claim (Canton's audience-based tokens)
  --issuer ISS      iss claim
  --kid KID         key id in the header (for a JWKS with several keys)
`;

const USAGE = `Usage:
  ledger-json-gateway [--config FILE] [--port N] [--ledger embedded|HOST:PORT] [--<key> VALUE ...]
      Serve the JSON Ledger API v2 (HTTP + WebSocket) in front of a gRPC Ledger API v2.
      --ledger embedded (the default) starts the in-memory sandbox participant with it.
${TOKEN_USAGE}  ledger-json-gateway bench --url URL --token-file FILE [--scenario LIST] [--rate R] ...
      Load-test a JSON Ledger API server (docs/load-testing.md); bench --help lists its flags.
  ledger-json-gateway --help
  ledger-json-gateway --version
      Print the version (token --version and bench --version too).

Settings, lowest precedence first: defaults, the --config file (YAML or JSON, nested or
dotted keys), LEDGER_GATEWAY_* environment variables, command-line flags.

Keys:
`;

/** After a command line it cannot read, under the fault: what to type instead. */
const USAGE_LINE =
  "usage: ledger-json-gateway [--config FILE] [--port N] [--ledger embedded|HOST:PORT] [--<key> VALUE ...] (--help lists the keys)";

/** The same for the token command. */
const TOKEN_USAGE_LINE =
  "usage: ledger-json-gateway token [--user ID] [--secret S] [--expires-in DURATION] [--alg HS256|RS256|ES256] ... (token --help lists them)";

/** A command line that could not be read: an unknown option, one without its value, a positional. */
const isCommandLineFault = (error: unknown): boolean =>
  error instanceof CommandLineError ||
  (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") === true;

async function main(argv: string[]): Promise<void> {
  // Every command answers it alike, the bench's too: the version is the package's, not a command's.
  if (hasFlag(argv, "--version")) {
    process.stdout.write(`ledger-json-gateway ${packageVersion()}\n`);
    return;
  }
  if (argv[0] === "token") {
    const args = argv.slice(1);
    try {
      process.stdout.write(isHelp(args) ? TOKEN_HELP : `${tokenCommand(args)}\n`);
    } catch (error) {
      if (!isCommandLineFault(error)) throw error;
      process.stderr.write(`ledger-json-gateway: ${(error as Error).message}\n${TOKEN_USAGE_LINE}\n`);
      process.exitCode = 2;
    }
    return;
  }
  if (argv[0] === "bench") {
    process.exitCode = await benchCommand(argv.slice(1));
    return;
  }
  if (isHelp(argv)) {
    process.stdout.write(`${USAGE}${describeKeys()}\n`);
    return;
  }
  let config: GatewayConfig;
  try {
    config = loadConfig({ argv, env: process.env });
  } catch (error) {
    if (error instanceof ConfigError) {
      const usage = error instanceof CommandLineError ? `${USAGE_LINE}\n` : "";
      process.stderr.write(`ledger-json-gateway: ${error.message}\n${usage}`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  await serve(config);
}

/**
 * `bench ...`: the load tester (bench/load.ts), run as a child process with these arguments and
 * its exit status passed on. A process, not an import: src/ never depends on bench/ (the
 * dependency rules), and the gateway does not load the bench's code. Built, it is
 * dist/bench/load.js beside dist/src; run from source (tsx), bench/load.ts with the same loader.
 *
 * Signals are the tool's to act on: SIGINT, SIGTERM and SIGHUP are passed on to it and this
 * process waits for its exit (a first signal makes the tool finish the run and write its partial
 * results, a second one makes it quit), so that nothing is left loading the server after this
 * process ends. The child has a process group of its own: a terminal's Ctrl-C, sent to the whole
 * foreground group, would otherwise reach it twice (directly, and passed on) and read as "quit now".
 */
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function benchCommand(args: readonly string[]): Promise<number> {
  const built = fileURLToPath(new URL("../bench/load.js", import.meta.url));
  const source = fileURLToPath(new URL("../bench/load.ts", import.meta.url));
  const script = existsSync(built) ? built : existsSync(source) ? source : undefined;
  if (script === undefined) {
    process.stderr.write(`ledger-json-gateway: bench needs the built load tester ${built} (npm run build)\n`);
    return Promise.resolve(2);
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, script, ...args], {
      stdio: "inherit",
      detached: true,
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
    const done = (status: number) => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
      resolve(status);
    };
    child.on("error", (error) => {
      process.stderr.write(`ledger-json-gateway: could not start the load tester: ${error.message}\n`);
      done(1);
    });
    // A child ended by a signal: the shell's status for it, 128 + the signal's number.
    child.on("exit", (code, signal) => done(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 0)));
  });
}

/** `--help` or `-h` as a flag of its own, not as the value of another flag. */
function isHelp(args: readonly string[]): boolean {
  return hasFlag(args, "--help", "-h");
}

/** One of the names as a flag of its own: every other flag takes a value, which may be any text. */
function hasFlag(args: readonly string[], ...names: readonly string[]): boolean {
  return args.some((arg, i) => names.includes(arg) && !args[i - 1]?.startsWith("--"));
}

/** The installed package's version: its package.json, found as the protos are (src/ or dist/src/). */
function packageVersion(): string {
  const { version } = JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as {
    version: string;
  };
  return version;
}

const TOKEN_OPTIONS = {
  user: { type: "string", default: "participant_admin" },
  secret: { type: "string", default: "secret" },
  "expires-in": { type: "string" },
  expires: { type: "string" },
  alg: { type: "string", default: "HS256" },
  key: { type: "string" },
  audience: { type: "string" },
  issuer: { type: "string" },
  kid: { type: "string" },
} as const;

function tokenCommand(args: string[]): string {
  for (const arg of args) {
    const name = /^--([^=]+)/.exec(arg)?.[1];
    if (name !== undefined && !(name in TOKEN_OPTIONS)) {
      const names = [...Object.keys(TOKEN_OPTIONS), "help"];
      const suggestion = nearestNames(
        name,
        names.map((option) => ({ name: `--${option}`, spellings: [option] })),
      );
      throw new CommandLineError(
        `unknown option --${name} of token${didYouMean(suggestion) || "; see token --help"}`,
      );
    }
  }
  const { values } = parseArgs({ args, options: TOKEN_OPTIONS });
  const expiresInSeconds = tokenLifetimeSeconds(values["expires-in"], values.expires);
  const algorithm = (values.alg ?? "HS256").toUpperCase() as SigningAlgorithm;
  if (!["HS256", "RS256", "ES256"].includes(algorithm))
    throw new ConfigError("--alg takes HS256, RS256 or ES256");
  if (algorithm !== "HS256" && values.key === undefined)
    throw new ConfigError(`--alg ${algorithm} needs --key PRIVATE_KEY_PEM_FILE`);
  const secret =
    algorithm === "HS256" ? (values.secret as string) : readFileSync(values.key as string, "utf8");
  return mintToken({
    user: values.user as string,
    secret,
    algorithm,
    expiresInSeconds,
    ...(values.audience !== undefined ? { audience: values.audience } : {}),
    ...(values.issuer !== undefined ? { issuer: values.issuer } : {}),
    ...(values.kid !== undefined ? { keyId: values.kid } : {}),
  });
}

/**
 * Canton's participant refuses tokens that expire more than its max-token-lifetime (5 minutes by
 * default) ahead, so that is the default: a token minted here works against Canton as it is.
 */
const DEFAULT_TOKEN_LIFETIME = "5m";

/** `--expires-in 8h` or `--expires 28800`, one of them; else the default. */
function tokenLifetimeSeconds(expiresIn: string | undefined, expires: string | undefined): number {
  if (expiresIn !== undefined && expires !== undefined)
    throw new ConfigError("give --expires-in or --expires, not both");
  if (expires !== undefined) {
    const seconds = Number(expires);
    if (!Number.isInteger(seconds) || seconds <= 0)
      throw new ConfigError(`--expires takes a positive number of seconds, got ${expires}`);
    return seconds;
  }
  const ms = parseDuration(expiresIn ?? DEFAULT_TOKEN_LIFETIME);
  if (ms === undefined || ms < 1000)
    throw new ConfigError(
      `--expires-in takes a duration of a second or more such as 90s, 5m, 8h, got ${expiresIn}`,
    );
  return Math.floor(ms / 1000);
}

/** The unsafe sandbox accepts any lifetime: the printed token lasts a day of development. */
const UNSAFE_START_TOKEN_SECONDS = 86_400;

/**
 * A first admin token to print at start, on the unsafe sandbox only: it accepts any signature, so
 * the token is no secret. A verifying sandbox's admin token is one (tokens are never logged): the
 * banner then says how to mint one instead.
 */
function startToken(config: GatewayConfig): { token: string; lifetime: string } | undefined {
  const { mode, audience, issuer } = config.sandboxAuth;
  if (mode !== "unsafe") return undefined;
  const expiresInSeconds = UNSAFE_START_TOKEN_SECONDS;
  const token = mintToken({
    user: "participant_admin",
    secret: "secret",
    expiresInSeconds,
    ...(audience !== undefined ? { audience } : {}),
    ...(issuer !== undefined ? { issuer } : {}),
  });
  return { token, lifetime: `${expiresInSeconds / 3600} h` };
}

/** How to mint an admin token the verifying sandbox accepts, without printing the secret. */
function mintHint(config: GatewayConfig): string {
  const { mode } = config.sandboxAuth;
  return mode === "hs256"
    ? 'ledger-json-gateway token --secret "$SANDBOX_SECRET"   # the --sandbox.auth.secret you gave'
    : `ledger-json-gateway token --alg ${mode.toUpperCase()} --key KEY.pem`;
}

/** What the command line drives of a gateway, one thread or several. */
interface RunningCliGateway {
  readonly port: number;
  enterLameDuck(): void;
  stop(): Promise<void>;
  readonly failed?: Promise<Error>;
}

async function serve(config: GatewayConfig): Promise<void> {
  const workers = config.server.workers;
  const log = gatewayLogger(config.log.level, workers > 1 ? "main" : undefined);
  let gateway: RunningCliGateway | undefined;
  let stopSandbox: (() => Promise<void>) | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      // An operator who signals again does not want to wait for the drain.
      log.warn({ signal }, "second signal: exiting without waiting for requests in flight");
      process.exit(1);
    }
    stopping = true;
    if (gateway === undefined) {
      // Still starting: nothing served yet, nothing to drain.
      log.info({ signal }, "stopping during start-up");
      await stopSandbox?.();
      process.exit(0);
    }
    // SIGTERM is how orchestrators stop a gateway behind a load balancer: first the lame duck,
    // which tells the balancer through /readyz while requests are still served. An operator's
    // Ctrl-C (SIGINT) has no balancer to wait for.
    const drainDelayMs = signal === "SIGTERM" ? config.server.drainDelayMs : 0;
    if (drainDelayMs > 0) {
      gateway.enterLameDuck();
      log.info({ signal, drainDelayMs }, "lame duck: /readyz answers 503, requests are still served");
      await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    }
    log.info({ signal }, "shutting down");
    await gateway.stop();
    await stopSandbox?.();
    log.info("stopped");
    process.exit(0);
  };
  // From the start: a signal right after the "gateway listening" line must not find Node's
  // default action (an abrupt exit) still in place.
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // Before the sandbox starts: a taken port is the whole story, not the end of a start-up log.
  // Worker threads share the port: the main thread holds it for them from now on.
  let held: HeldPort | undefined;
  if (workers > 1) held = await holdGatewayPort(config);
  else await checkAddressFree(config);
  let ledgerAddress: LedgerAddress;
  let sandboxEnded: Promise<Error> | undefined;
  if (config.ledger.kind === "embedded") {
    // Loaded only when needed: a gateway in front of a real participant never loads the sandbox.
    const { startSandboxWorker } = await import("./sandbox/sandbox-worker.js");
    const auth = readVerificationFiles(config.sandboxAuth);
    const sandbox = await startSandboxWorker({
      port: config.ledger.sandboxPort,
      apiVersion: config.ledger.apiVersion,
      auth,
    });
    stopSandbox = () => sandbox.stop();
    sandboxEnded = sandbox.ended;
    ledgerAddress = { host: "127.0.0.1", port: sandbox.port };
    if (auth.mode === "unsafe") {
      log.warn(
        { port: sandbox.port, apiVersion: config.ledger.apiVersion },
        "embedded sandbox participant started (unsecured development ledger: any token signature is accepted, loopback only; user rights are enforced)",
      );
    } else {
      log.info(
        { port: sandbox.port, auth: auth.mode, apiVersion: config.ledger.apiVersion },
        "embedded sandbox participant started (loopback only)",
      );
    }
  } else {
    const { host, port, tls } = config.ledger;
    ledgerAddress = tls ? { host, port, tls } : { host, port };
  }
  let running: RunningCliGateway;
  if (held === undefined) {
    running = await startGateway(config, ledgerAddress, log);
  } else {
    try {
      running = await startGatewayWorkers({ count: workers, config, port: held.port, ledgerAddress, log });
    } finally {
      held.release();
    }
    log.info(
      {
        address: config.server.address,
        port: running.port,
        ledger: `${ledgerAddress.host}:${ledgerAddress.port}`,
        workers,
      },
      "gateway listening",
    );
  }
  gateway = running;
  if (config.ledger.kind === "embedded") {
    // A first request to copy: stderr, so stdout stays one JSON log entry per line.
    const start = startToken(config);
    const base = `http://${config.server.address}:${running.port}${config.server.pathPrefix}`;
    process.stderr.write(
      start === undefined
        ? `\nMint an admin token (the sandbox verifies tokens; none is printed):\n  ${mintHint(config)}\n\n`
        : `\nAdmin token (participant_admin, ${start.lifetime}):\n  ${start.token}\nTry:\n  curl -H 'Authorization: Bearer ${start.token}' ${base}/v2/version\n\n`,
    );
  }

  if (running.failed) {
    void running.failed.then(async (error) => {
      if (stopping) return;
      stopping = true;
      log.error({ err: error }, "a gateway worker ended; stopping the gateway");
      await running.stop();
      await stopSandbox?.();
      process.exit(1);
    });
  }
  // Without its ledger the gateway could only answer 503 for ever: exit, so a supervisor (or
  // the developer at `make run`) sees it and starts it again.
  void sandboxEnded?.then(async (error) => {
    if (stopping) return;
    stopping = true;
    log.error({ err: error }, "the embedded sandbox ended; stopping the gateway");
    await running.stop();
    process.exit(1);
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`ledger-json-gateway: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (error instanceof ListenError) {
    process.stderr.write(`ledger-json-gateway: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `ledger-json-gateway: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
