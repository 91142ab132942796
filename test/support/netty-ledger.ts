import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { type NettyLedgerBuild, nettyLedgerBuild } from "./netty-ledger-build.js";
import { stopChild } from "./sandbox-process.js";

export { nettyLedgerBuild } from "./netty-ledger-build.js";

/**
 * grpc-java on Netty configured as Canton 3.5's Ledger API (10 MiB messages, 8 KiB metadata,
 * 100000 calls per connection, keepalive 10 min / 20 s, pings permitted every 10 s and only
 * with calls open), forwarding every call to a backend such as the sandbox. Durations are
 * seconds (fractions allowed); absent ones are Canton's defaults (no connection age or idle
 * limit). grpc-java raises a connection age or idle limit under 1 s to 1 s.
 */
export interface NettyLedgerOptions {
  backendPort: number;
  backendHost?: string;
  /** 0 or absent: ephemeral. */
  port?: number;
  maxConnectionAgeSeconds?: number;
  maxConnectionAgeGraceSeconds?: number;
  maxConnectionIdleSeconds?: number;
  permitKeepAliveSeconds?: number;
  /** The server's own pings (Canton: 600). */
  keepAliveTimeSeconds?: number;
  keepAliveTimeoutSeconds?: number;
  /** Canton's `max-inbound-metadata-size`, 8192 by default. */
  maxInboundMetadataBytes?: number;
  /**
   * How often the rights of a stream's user are read again; once they changed, the stream ends
   * with STALE_STREAM_AUTHORIZATION, as Canton's UserBasedOngoingAuthorization ends it (Canton:
   * user-management-service.cache-expiry-after-write-in-seconds, 5). Absent: never, so that the
   * other tests' streams cost the sandbox no ListUserRights calls.
   */
  userRightsCheckIntervalSeconds?: number;
}

export interface NettyLedger {
  /** Its port; the same after restart(). */
  readonly port: number;
  /** Its stderr so far (the last 8,000 characters): grpc-java's warnings, start-up failures. */
  output(): string;
  /** SIGTERM: grpc-java's shutdownNow (GOAWAY, then the connections close). */
  stop(): Promise<void>;
  /** SIGKILL: the ledger's front dies on the spot; the kernel resets its connections. */
  kill(): Promise<void>;
  /** Stops it if running, and starts it again on the same port with the same options. */
  restart(): Promise<void>;
}

const FLAGS: [keyof NettyLedgerOptions, string][] = [
  ["maxConnectionAgeSeconds", "--max-connection-age"],
  ["maxConnectionAgeGraceSeconds", "--max-connection-age-grace"],
  ["maxConnectionIdleSeconds", "--max-connection-idle"],
  ["permitKeepAliveSeconds", "--permit-keepalive-time"],
  ["keepAliveTimeSeconds", "--keepalive-time"],
  ["keepAliveTimeoutSeconds", "--keepalive-timeout"],
  ["maxInboundMetadataBytes", "--max-inbound-metadata-size"],
  ["userRightsCheckIntervalSeconds", "--user-rights-check-interval"],
];

/**
 * Starts the Netty ledger (building it first if needed, see nettyLedgerBuild); rejects with the
 * build's skip reason where it cannot be had, so tests check nettyLedgerBuild() first.
 */
export async function startNettyLedger(options: NettyLedgerOptions): Promise<NettyLedger> {
  const build = await nettyLedgerBuild();
  if ("skip" in build) throw new Error(build.skip);
  const stderr = { tail: "" };
  let child = await spawnLedger(build, options, options.port ?? 0, stderr);
  const port = child.port;
  return {
    port,
    output: () => stderr.tail,
    stop: () => stopChild(child.process),
    async kill() {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return;
      const exited = once(child.process, "exit");
      child.process.kill("SIGKILL");
      await exited;
    },
    async restart() {
      await stopChild(child.process);
      child = await spawnLedger(build, options, port, stderr);
    },
  };
}

async function spawnLedger(
  build: NettyLedgerBuild,
  options: NettyLedgerOptions,
  port: number,
  stderr: { tail: string },
): Promise<{ process: ChildProcess; port: number }> {
  const args = [
    "--port",
    String(port),
    "--backend",
    `${options.backendHost ?? "127.0.0.1"}:${options.backendPort}`,
  ];
  for (const [key, flag] of FLAGS) {
    const value = options[key];
    if (value !== undefined) args.push(flag, String(value));
  }
  // A light JVM for a test proxy on a loaded machine: one GC thread, the quick compiler only.
  const child = spawn(
    build.java,
    [
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-Xmx256m",
      "-cp",
      build.classpath,
      "NettyLedger",
      ...args,
    ],
    // stdin stays open: the ledger exits when it closes, so a dead test process leaves none behind.
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr.tail = (stderr.tail + chunk).slice(-8_000);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [first] = (await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code, signal]) => {
      throw new Error(`the Netty ledger exited (${code ?? signal}) before printing its port: ${stderr.tail}`);
    }),
  ])) as [string];
  lines.on("line", () => {});
  const bound = Number(first);
  if (!Number.isInteger(bound) || bound <= 0)
    throw new Error(`the Netty ledger printed ${first}, not a port`);
  return { process: child, port: bound };
}
