import { execFile } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../../src/proto/project-root.js";

export interface BenchRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * The load tool as a user runs it (`ledger-json-gateway bench`, from source), in a process of its
 * own and asynchronously: the gateway and the sandbox it loads may live in the test's process.
 */
export function runBench(args: readonly string[], timeoutMs = 60_000): Promise<BenchRun> {
  const root = projectRoot();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", join(root, "bench", "load.ts"), ...args],
      { cwd: root, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (error, stdout, stderr) =>
        resolve({ status: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
