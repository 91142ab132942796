import { parseArgs } from "node:util";
import { pino } from "pino";
import { readVerificationFiles, VERIFICATION_MODES, type VerificationMode } from "../jwt/token-verifier.js";
import {
  type ApiVersion,
  DEFAULT_API_VERSION,
  isKnownApiVersion,
  KNOWN_API_VERSIONS,
} from "../proto/api-version.js";
import type { PreloadOptions } from "./ledger/preload.js";
import { startSandbox } from "./sandbox.js";

const USAGE = `Usage: node --import tsx src/sandbox/main.ts [options]   (after a build: node dist/src/sandbox/main.js)
The standalone sandbox participant, for benchmarks and for gateways started apart from it.
Prints the bound port on stdout (one line) and stops on SIGINT/SIGTERM.
  --port N                      gRPC port; 0 picks an ephemeral one (default 6865)
  --host H                      address to listen on (default 127.0.0.1)
  --participant NAME            participant name in party ids (default sandbox)
  --api-version V               the Canton release it speaks and reports: ${KNOWN_API_VERSIONS.join(" | ")}
                                (default ${DEFAULT_API_VERSION})
  --log-level L                 pino level, logs on stderr (default info)
  --auth-mode M                 unsafe | hs256 | rs256 | es256 (default unsafe: rights checked, signatures not)
  --auth-secret S               hs256 secret
  --auth-public-key-file F      rs256/es256 public key (PEM)
  --auth-jwks-file F            rs256/es256 keys as a JWKS document
  --auth-audience A, --auth-issuer I
                                required audience / issuer of tokens
  --auth-max-token-lifetime-ms N
                                hs256/rs256/es256: refuse tokens expiring further ahead, or never
                                (default 300000, Canton's max-token-lifetime; 0: no limit)
  --idle-stream-offset-checkpoint-timeout-ms N
                                idle time before a tailing stream gets an offset checkpoint (default 60000, Canton's)
  --preload ticks=N[,payloadBytes=64][,party=bench][,perTransaction=1]
                                bulk-creates Bench:Tick contracts first; logs their owner party on stderr
  --help                        this text
`;

/** Under a command line it cannot read: what to type instead. */
const USAGE_LINE = (USAGE.split("\n")[0] as string).replace(/^Usage:/, "usage:");

/** A mistake in the command line: the fault and the usage line on stderr, exit code 2, no stack trace. */
class UsageError extends Error {}

const values = (() => {
  try {
    return parseOptions();
  } catch (error) {
    if (!(error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")))
      throw error;
    // A flag it cannot read gets the usage line too; a bad value is its own line.
    const usage = error instanceof UsageError ? "" : `${USAGE_LINE}\n`;
    process.stderr.write(`sandbox: ${(error as Error).message} (--help lists the options)\n${usage}`);
    process.exit(2);
  }
})();

function parseOptions() {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "6865" },
      host: { type: "string", default: "127.0.0.1" },
      participant: { type: "string", default: "sandbox" },
      "api-version": { type: "string", default: DEFAULT_API_VERSION },
      "log-level": { type: "string", default: "info" },
      preload: { type: "string" },
      "auth-mode": { type: "string", default: "unsafe" },
      "auth-secret": { type: "string" },
      "auth-public-key-file": { type: "string" },
      "auth-jwks-file": { type: "string" },
      "auth-audience": { type: "string" },
      "auth-issuer": { type: "string" },
      "auth-max-token-lifetime-ms": { type: "string" },
      "idle-stream-offset-checkpoint-timeout-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (!isKnownApiVersion(values["api-version"]))
    throw new UsageError(`--api-version must be one of ${KNOWN_API_VERSIONS.join(", ")}`);
  const mode = values["auth-mode"] as VerificationMode;
  if (!VERIFICATION_MODES.includes(mode))
    throw new UsageError(`--auth-mode must be one of ${VERIFICATION_MODES.join(", ")}`);
  const idle = values["idle-stream-offset-checkpoint-timeout-ms"];
  if (idle !== undefined && !(Number.isSafeInteger(Number(idle)) && Number(idle) > 0))
    throw new UsageError(
      `--idle-stream-offset-checkpoint-timeout-ms must be a positive integer, got ${idle}`,
    );
  const lifetime = values["auth-max-token-lifetime-ms"];
  if (lifetime !== undefined && !(Number.isSafeInteger(Number(lifetime)) && Number(lifetime) >= 0))
    throw new UsageError(`--auth-max-token-lifetime-ms must be an integer >= 0, got ${lifetime}`);
  if (values.preload !== undefined) parsePreload(values.preload);
  return values;
}

const mode = values["auth-mode"] as VerificationMode;
const auth = readVerificationFiles({
  mode,
  ...(values["auth-secret"] !== undefined ? { secret: values["auth-secret"] } : {}),
  ...(values["auth-public-key-file"] !== undefined ? { publicKeyFile: values["auth-public-key-file"] } : {}),
  ...(values["auth-jwks-file"] !== undefined ? { jwksFile: values["auth-jwks-file"] } : {}),
  ...(values["auth-audience"] !== undefined ? { audience: values["auth-audience"] } : {}),
  ...(values["auth-issuer"] !== undefined ? { issuer: values["auth-issuer"] } : {}),
  ...(values["auth-max-token-lifetime-ms"] !== undefined
    ? { maxTokenLifetimeMs: Number(values["auth-max-token-lifetime-ms"]) }
    : {}),
});

const idleCheckpoint = values["idle-stream-offset-checkpoint-timeout-ms"];

const sandbox = await startSandbox({
  port: Number(values.port),
  host: values.host,
  participantName: values.participant,
  apiVersion: values["api-version"] as ApiVersion,
  ...(values.preload !== undefined ? { preload: parsePreload(values.preload) } : {}),
  auth,
  ...(idleCheckpoint !== undefined ? { idleStreamOffsetCheckpointTimeoutMs: Number(idleCheckpoint) } : {}),
  log: pino({ level: values["log-level"] }, pino.destination(2)),
});
process.stdout.write(`${sandbox.port}\n`);
if (sandbox.preloaded !== undefined) {
  const { ticks, party, firstOffset, lastOffset } = sandbox.preloaded;
  process.stderr.write(
    `preloaded ${ticks} ticks owned by ${party} at offsets ${firstOffset}..${lastOffset}\n`,
  );
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void sandbox.stop().then(() => process.exit(0));
  });
}

/** `ticks=200000,payloadBytes=64,party=bench` */
function parsePreload(spec: string): PreloadOptions {
  const fields = new Map(spec.split(",").map((pair) => pair.split("=", 2) as [string, string]));
  const ticks = Number(fields.get("ticks"));
  if (!Number.isSafeInteger(ticks) || ticks < 0)
    throw new UsageError(`--preload needs ticks=<count>, got ${spec}`);
  const payloadBytes = fields.has("payloadBytes") ? Number(fields.get("payloadBytes")) : undefined;
  const party = fields.get("party");
  const perTransaction = fields.has("perTransaction") ? Number(fields.get("perTransaction")) : undefined;
  if (perTransaction !== undefined && !(Number.isSafeInteger(perTransaction) && perTransaction > 0))
    throw new UsageError(`--preload perTransaction must be a positive integer, got ${spec}`);
  return {
    ticks,
    ...(payloadBytes !== undefined ? { payloadBytes } : {}),
    ...(party !== undefined ? { party } : {}),
    ...(perTransaction !== undefined ? { perTransaction } : {}),
  };
}
