import { parseArgs } from "node:util";
import { pino } from "pino";
import { readVerificationFiles, VERIFICATION_MODES, type VerificationMode } from "../jwt/token-verifier.js";
import type { PreloadOptions } from "./ledger/preload.js";
import { startSandbox } from "./sandbox.js";

/**
 * Standalone sandbox for benchmarks and manual use:
 * `node --import tsx src/sandbox/main.ts --port 6865 [--host 127.0.0.1] [--participant sandbox]
 *  [--auth-mode unsafe|hs256|rs256|es256 --auth-secret S | --auth-public-key-file F | --auth-jwks-file F]
 *  [--auth-audience A] [--auth-issuer I] [--idle-stream-offset-checkpoint-timeout-ms 60000]`.
 * `--preload ticks=200000[,payloadBytes=64][,party=bench][,perTransaction=1]` bulk-creates Bench:Tick contracts first
 * and logs their owner party on stderr.
 * Prints the bound port on stdout (one line) and stops on SIGINT/SIGTERM.
 */
const { values } = parseArgs({
  options: {
    port: { type: "string", default: "6865" },
    host: { type: "string", default: "127.0.0.1" },
    participant: { type: "string", default: "sandbox" },
    "log-level": { type: "string", default: "info" },
    preload: { type: "string" },
    "auth-mode": { type: "string", default: "unsafe" },
    "auth-secret": { type: "string" },
    "auth-public-key-file": { type: "string" },
    "auth-jwks-file": { type: "string" },
    "auth-audience": { type: "string" },
    "auth-issuer": { type: "string" },
    "idle-stream-offset-checkpoint-timeout-ms": { type: "string" },
  },
});

const mode = values["auth-mode"] as VerificationMode;
if (!VERIFICATION_MODES.includes(mode))
  throw new Error(`--auth-mode must be one of ${VERIFICATION_MODES.join(", ")}`);
const auth = readVerificationFiles({
  mode,
  ...(values["auth-secret"] !== undefined ? { secret: values["auth-secret"] } : {}),
  ...(values["auth-public-key-file"] !== undefined ? { publicKeyFile: values["auth-public-key-file"] } : {}),
  ...(values["auth-jwks-file"] !== undefined ? { jwksFile: values["auth-jwks-file"] } : {}),
  ...(values["auth-audience"] !== undefined ? { audience: values["auth-audience"] } : {}),
  ...(values["auth-issuer"] !== undefined ? { issuer: values["auth-issuer"] } : {}),
});

const idleCheckpoint = values["idle-stream-offset-checkpoint-timeout-ms"];
if (
  idleCheckpoint !== undefined &&
  !(Number.isSafeInteger(Number(idleCheckpoint)) && Number(idleCheckpoint) > 0)
)
  throw new Error(
    `--idle-stream-offset-checkpoint-timeout-ms must be a positive integer, got ${idleCheckpoint}`,
  );

const sandbox = await startSandbox({
  port: Number(values.port),
  host: values.host,
  participantName: values.participant,
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
    throw new Error(`--preload needs ticks=<count>, got ${spec}`);
  const payloadBytes = fields.has("payloadBytes") ? Number(fields.get("payloadBytes")) : undefined;
  const party = fields.get("party");
  const perTransaction = fields.has("perTransaction") ? Number(fields.get("perTransaction")) : undefined;
  if (perTransaction !== undefined && !(Number.isSafeInteger(perTransaction) && perTransaction > 0))
    throw new Error(`--preload perTransaction must be a positive integer, got ${spec}`);
  return {
    ticks,
    ...(payloadBytes !== undefined ? { payloadBytes } : {}),
    ...(party !== undefined ? { party } : {}),
    ...(perTransaction !== undefined ? { perTransaction } : {}),
  };
}
