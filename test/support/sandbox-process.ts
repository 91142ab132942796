import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

/**
 * The standalone sandbox (src/sandbox/main.ts) in a process of its own, run from the sources
 * through tsx: a ledger a test can freeze (SIGSTOP), kill and start again on its port, as a real
 * participant goes away.
 */
export interface SandboxProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** Its stderr so far, cut to the last 8,000 characters (start-up failures, logs). */
  output(): string;
  /** SIGTERM: the sandbox shuts down as it does for a supervisor. */
  stop(): Promise<void>;
  /** SIGKILL: the ledger dies on the spot. */
  kill(): Promise<void>;
}

/** Starts the sandbox on `port` (0: ephemeral) with extra `args`; resolves once it printed its port. */
export async function startSandboxProcess(
  options: { port?: number; args?: readonly string[] } = {},
): Promise<SandboxProcess> {
  const child = spawn(
    process.execPath,
    [
      ...["--import", "tsx", "src/sandbox/main.ts"],
      ...["--port", String(options.port ?? 0), "--log-level", "error"],
      ...(options.args ?? []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-8_000);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [first] = (await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(() => {
      throw new Error(`the sandbox exited before printing its port: ${stderr}`);
    }),
  ])) as [string];
  // Keeps reading, so that a full pipe never blocks the sandbox.
  lines.on("line", () => {});
  return {
    child,
    port: Number(first),
    output: () => stderr,
    stop: () => stopChild(child),
    async kill() {
      if (!running(child)) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** SIGTERM (after SIGCONT: a frozen process acts on no other signal), SIGKILL after 10 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (!running(child)) return;
  const exited = once(child, "exit");
  child.kill("SIGCONT");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
