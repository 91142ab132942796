import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A Debian binary a test needs (prometheus, nginx, kubectl): found on the PATH or under
 * /usr/sbin, else installed with apt-get when the test runs as root. Resolves with its path,
 * or with `{ skip }` naming why it cannot be had, for `it(..., { skip })`: never a silent skip.
 */
export async function debianBinary(
  binary: string,
  debianPackage: string,
): Promise<string | { skip: string }> {
  const found = await which(binary);
  if (found) return found;
  const installed = await debianPackages([debianPackage]);
  if (installed !== true) return { skip: `${binary} is not installed: ${installed.skip}` };
  return (await which(binary)) ?? { skip: `${debianPackage} installed no ${binary}` };
}

const APT_LOCK = "/tmp/ledger-json-gateway-apt.lock";

/**
 * Installs Debian packages with apt-get (root only), refreshing the package lists once if a
 * first try fails. Resolves true, or with `{ skip }` naming the packages and why they cannot be had.
 */
export async function debianPackages(packages: readonly string[]): Promise<true | { skip: string }> {
  const line = `apt-get install ${packages.join(" ")}`;
  if (process.getuid?.() !== 0) return { skip: `this test is not root: ${line}` };
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // One apt-get at a time: test files run two at once, and a second apt-get fails on the lock.
  const aptGet = (...args: string[]) =>
    run("flock", [APT_LOCK, "apt-get", ...args], { env, timeout: 600_000 });
  const install = () => aptGet("install", "-y", "--no-install-recommends", ...packages);
  try {
    await install();
  } catch {
    try {
      // A fresh machine's package lists may be empty or stale.
      await aptGet("update");
      await install();
    } catch (error) {
      return { skip: `${line} failed: ${(error as Error).message.slice(0, 500)}` };
    }
  }
  return true;
}

async function which(binary: string): Promise<string | undefined> {
  for (const dir of ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin", "/usr/local/sbin"]) {
    if (existsSync(`${dir}/${binary}`)) return `${dir}/${binary}`;
  }
  try {
    return (await run("sh", ["-c", `command -v ${binary}`])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
