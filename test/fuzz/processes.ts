import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { stopChild } from "../support/sandbox-process.js";

/**
 * The fuzzer's gateway as a child process over real sockets, in front of the standalone sandbox
 * process (test/support/sandbox-process.ts), so that its RSS is its own, sampled from /proc. It
 * runs from the sources through tsx, as the other process tests do.
 */
const TSX = ["--import", "tsx"];

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** Every line the gateway wrote (stdout JSON logs and stderr), for the secrets check. */
  readonly lines: string[];
  /** Its log entries at error level or above. */
  errors(): LogEntry[];
  alive(): boolean;
  stop(): Promise<void>;
}

/** Starts `src/cli.ts` in front of the ledger at `ledgerPort`; resolves once it logs `gateway listening`. */
export async function startGatewayProcess(
  ledgerPort: number,
  args: readonly string[],
): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    // Stopped as teardown: no lame duck to wait through (test/cli/graceful-shutdown.test.ts has it).
    [
      ...TSX,
      "src/cli.ts",
      "--port",
      "0",
      "--ledger",
      `127.0.0.1:${ledgerPort}`,
      "--server.drain-delay",
      "0s",
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  const entries: LogEntry[] = [];
  const keep = (line: string) => {
    if (lines.length < 200_000) lines.push(line);
  };
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", keep);
  const stdout = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const listening = new Promise<number>((resolve, reject) => {
    stdout.on("line", (line) => {
      keep(line);
      let entry: LogEntry;
      try {
        entry = JSON.parse(line) as LogEntry;
      } catch {
        return;
      }
      if (entry.level >= 50) entries.push(entry);
      if (entry.msg === "gateway listening" && typeof entry.port === "number") resolve(entry.port);
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`the gateway exited (${code ?? signal}) before listening: ${lines.join("\n")}`)),
    );
  });
  const port = await listening;
  return {
    child,
    pid: child.pid as number,
    port,
    lines,
    errors: () => entries,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: () => stopChild(child),
  };
}

/** Resident set size now and its peak (VmHWM, kept by the kernel), in bytes; undefined once gone. */
export function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** Samples a process's RSS at an interval; `peak` also takes the kernel's own high-water mark. */
export class RssSampler {
  readonly #pid: number;
  readonly #timer: NodeJS.Timeout;
  #max = 0;
  #hwm = 0;

  constructor(pid: number, intervalMs = 100) {
    this.#pid = pid;
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  sample(): number | undefined {
    const memory = memoryOf(this.#pid);
    if (memory === undefined) return undefined;
    this.#max = Math.max(this.#max, memory.rss);
    this.#hwm = Math.max(this.#hwm, memory.peak);
    return memory.rss;
  }

  /** The highest RSS seen by sampling or by the kernel's VmHWM. */
  peak(): number {
    this.sample();
    return Math.max(this.#max, this.#hwm);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
