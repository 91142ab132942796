import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, rename, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { debianPackages } from "../deploy/debian-package.js";

const run = promisify(execFile);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE = `${ROOT}test/support/netty-ledger/NettyLedger.java`;
const CACHE = `${ROOT}node_modules/.cache/netty-ledger`;

/**
 * What the Netty ledger needs, from Debian: a JDK, and grpc-java 1.41 with what it loads at run
 * time. libgrpc-java declares none of these as dependencies, so each is named.
 */
const PACKAGES = [
  "default-jdk-headless",
  "libgrpc-java",
  "libnetty-java",
  "libperfmark-java",
  "libguava-java",
];
const JARS = [
  "grpc-api",
  "grpc-context",
  "grpc-core",
  "grpc-netty",
  "guava",
  "perfmark-api",
  ...["buffer", "codec", "codec-http", "codec-http2", "common", "handler", "resolver", "transport"].map(
    (part) => `netty-${part}`,
  ),
].map((jar) => `/usr/share/java/${jar}.jar`);
const TOOLS = ["/usr/bin/java", "/usr/bin/javac"];

/** How to run the compiled NettyLedger: the java binary and the class path. */
export interface NettyLedgerBuild {
  readonly java: string;
  readonly classpath: string;
}

let build: Promise<NettyLedgerBuild | { skip: string }> | undefined;

/**
 * Installs the Debian packages (root, apt-get) when a file is missing, and compiles
 * NettyLedger.java once into node_modules/.cache/netty-ledger/<hash of the source and the jars'
 * versions>: later runs only check that the classes are there. Resolves with `{ skip }` naming
 * what cannot be had, for `describe(..., { skip })`: never a silent skip.
 */
export function nettyLedgerBuild(): Promise<NettyLedgerBuild | { skip: string }> {
  build ??= buildOnce();
  return build;
}

async function buildOnce(): Promise<NettyLedgerBuild | { skip: string }> {
  const missing = () => [...TOOLS, ...JARS].filter((file) => !existsSync(file));
  if (missing().length > 0) {
    const installed = await debianPackages(PACKAGES);
    if (installed !== true)
      return { skip: `the Netty ledger needs ${missing().join(", ")}: ${installed.skip}` };
    if (missing().length > 0) return { skip: `${PACKAGES.join(" ")} installed no ${missing().join(", ")}` };
  }
  const jars = await Promise.all(JARS.map((jar) => realpath(jar)));
  const source = await readFile(SOURCE);
  const key = createHash("sha256").update(source).update(jars.join(":")).digest("hex").slice(0, 16);
  const classes = `${CACHE}/${key}`;
  if (!existsSync(`${classes}/NettyLedger.class`)) {
    // Compiled aside and renamed, so that a concurrent test never sees half the classes.
    const scratch = `${classes}.${process.pid}`;
    await mkdir(scratch, { recursive: true });
    try {
      await run(TOOLS[1] as string, ["-d", scratch, "-cp", jars.join(":"), SOURCE], { timeout: 300_000 });
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      return { skip: `javac NettyLedger.java failed: ${(error as Error).message.slice(0, 1_000)}` };
    }
    await rename(scratch, classes).catch(() => rm(scratch, { recursive: true, force: true }));
  }
  return { java: TOOLS[0] as string, classpath: [classes, ...jars].join(":") };
}
