import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** The gateway's command line (src/cli.ts) run from the sources, for tests that need its own process. */
export const GATEWAY_CLI = ["--import", "tsx", "src/cli.ts"];

/** Waits for the JSON log line that says the gateway listens, and returns its port. */
export async function listeningPort(child: ChildProcess): Promise<number> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === "gateway listening" && typeof entry.port === "number") return entry.port;
  }
  throw new Error("the gateway exited before listening");
}
