import { type ExecFileOptions, execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * `npm pack` builds (prepack), and the build's gen:types deletes and rewrites
 * src/proto/generated: two builds at once, such as those of npm-package.test.ts and
 * container-image.test.ts run side by side, would read each other's half-written files.
 */
const BUILD_LOCK = "/tmp/ledger-json-gateway-build.lock";

/** Runs a command that builds the package, after any other such command of the tests has ended. */
export function underBuildLock(
  file: string,
  args: readonly string[],
  options: ExecFileOptions,
): Promise<{ stdout: string; stderr: string }> {
  return run("flock", [BUILD_LOCK, file, ...args], { ...options, encoding: "utf8" });
}
