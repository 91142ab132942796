import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { freePort } from "../../bench/lib/free-port.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, SERVICES, serviceClient } from "../sandbox/sandbox-client.js";
import { GATEWAY_CLI, listeningPort } from "../support/gateway-cli.js";
import { tokenFor } from "../support/tokens.js";
import { waitFor } from "../support/transport-harness.js";

interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** The gateway's JSON log lines on stdout, kept, so that a test can wait for one of them. */
class LogLines {
  readonly entries: LogEntry[] = [];
  readonly #waiters: { match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }[] = [];
  #closed = false;

  constructor(child: ChildProcess) {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as LogEntry;
      this.entries.push(entry);
      for (const waiter of [...this.#waiters]) {
        if (!waiter.match(entry)) continue;
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    });
    lines.on("close", () => {
      this.#closed = true;
    });
  }

  /** The first entry, past or future, that matches; fails if the process ends without one. */
  until(match: (e: LogEntry) => boolean, what: string, child: ChildProcess): Promise<LogEntry> {
    const seen = this.entries.find(match);
    if (seen) return Promise.resolve(seen);
    if (this.#closed) return Promise.reject(new Error(`exited before logging ${what}`));
    return new Promise((resolve, reject) => {
      this.#waiters.push({ match, resolve });
      child.once("exit", () => reject(new Error(`exited before logging ${what}`)));
    });
  }
}

/** Runs the CLI to its end; resolves with its exit code and output. */
async function runToEnd(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...GATEWAY_CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

/** Teardown: SIGINT, the graceful shutdown without SIGTERM's lame duck to wait through. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  await once(child, "exit");
}

describe("ledger-json-gateway CLI", () => {
  it("serves on the embedded sandbox and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, [...GATEWAY_CLI, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const port = await listeningPort(child);
      const res = await fetch(`http://127.0.0.1:${port}/v2/version`, {
        headers: { authorization: `Bearer ${tokenFor()}` },
      });
      assert.equal(res.status, 200);
      assert.match(((await res.json()) as { version: string }).version, /^3\.5\./);
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      assert.equal(code, 0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("starts the embedded sandbox as the release --sandbox.api-version names, and serves that release", async () => {
    const child = spawn(process.execPath, [...GATEWAY_CLI, "--port", "0", "--sandbox.api-version", "3.5.4"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const port = await listeningPort(child);
      const res = await fetch(`http://127.0.0.1:${port}/v2/version`);
      assert.equal(((await res.json()) as { version: string }).version, "3.5.4");
      // 3.5.10's operation is not 3.5.4's: its Canton knows no such path.
      const later = await fetch(`http://127.0.0.1:${port}/v2/commands/command-completions`, {
        method: "POST",
        body: "{}",
      });
      assert.equal(later.status, 404);
    } finally {
      await stop(child);
    }
  });

  it("prints its flags and keys with --help", () => {
    const result = spawnSync(process.execPath, [...GATEWAY_CLI, "--help"], { encoding: "utf8" });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--ledger, --ledger\.target/);
    assert.match(result.stdout, /websocket-config\.http-list-max-elements-limit/);
    assert.match(result.stdout, /LEDGER_GATEWAY_SERVER_PORT/);
  });

  it("refuses an unknown flag with a clear message and exit code 2", () => {
    const result = spawnSync(process.execPath, [...GATEWAY_CLI, "--colour", "blue"], { encoding: "utf8" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /unknown configuration key 'colour' in flag --colour/);
  });

  it("refuses a mistyped env var naming the nearest valid one", async () => {
    const result = await runToEnd(["--port", "0"], { LEDGER_GATEWAY_PORT: "8000" });
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "ledger-json-gateway: unknown environment variable LEDGER_GATEWAY_PORT; did you mean LEDGER_GATEWAY_SERVER_PORT?\n",
    );
  });

  it("prints the token subcommand's own help with token --help", () => {
    const result = spawnSync(process.execPath, [...GATEWAY_CLI, "token", "--help"], { encoding: "utf8" });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Usage:\n {2}ledger-json-gateway token /);
    assert.match(result.stdout, /--kid KID/);
    assert.doesNotMatch(result.stdout, /websocket-config/, "the server's keys are not the token's options");
    assert.equal(spawnSync(process.execPath, [...GATEWAY_CLI, "token", "--user", "bob", "-h"]).status, 0);
  });

  it("refuses a mistyped token option naming the nearest one", () => {
    const result = spawnSync(process.execPath, [...GATEWAY_CLI, "token", "--usr", "bob"], {
      encoding: "utf8",
    });
    assert.equal(result.status, 2);
    const [fault, usage, end] = result.stderr.split("\n");
    assert.equal(fault, "ledger-json-gateway: unknown option --usr of token; did you mean --user?");
    assert.match(usage ?? "", /^usage: ledger-json-gateway token \[--user ID\]/);
    assert.equal(end, "");
  });
});

/** The claims of a JWT, unverified. */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as {
    exp: number;
    iat: number;
  };

const mint = (...args: string[]) =>
  spawnSync(process.execPath, [...GATEWAY_CLI, "token", ...args], { encoding: "utf8" });

describe("token lifetimes (Canton's max-token-lifetime)", () => {
  it("mints a 5-minute token by default, which a verifying sandbox with Canton's default limit accepts", async () => {
    const minted = mint("--secret", "lifetime-secret");
    assert.equal(minted.status, 0, minted.stderr);
    const token = minted.stdout.trim();
    const { exp, iat } = claimsOf(token);
    assert.equal(exp - iat, 300);
    const sandbox = await startSandbox({ port: 0, auth: { mode: "hs256", secret: "lifetime-secret" } });
    const version = serviceClient(sandbox.port, SERVICES.version);
    try {
      await version.GetLedgerApiVersion!({}, bearer(token));
    } finally {
      version.close();
      await sandbox.stop();
    }
  });

  it("takes another lifetime with --expires-in (a duration) or --expires (seconds)", () => {
    const lifetime = (...args: string[]) => {
      const minted = mint(...args);
      assert.equal(minted.status, 0, minted.stderr);
      const { exp, iat } = claimsOf(minted.stdout.trim());
      return exp - iat;
    };
    assert.equal(lifetime("--expires-in", "8h"), 28_800);
    assert.equal(lifetime("--expires-in", "90s"), 90);
    assert.equal(lifetime("--expires", "60"), 60);
  });

  it("refuses a malformed lifetime, and both options at once, with exit code 2", () => {
    const bad = mint("--expires-in", "soon");
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--expires-in takes a duration .* got soon/);
    const both = mint("--expires-in", "5m", "--expires", "300");
    assert.equal(both.status, 2);
    assert.equal(both.stderr, "ledger-json-gateway: give --expires-in or --expires, not both\n");
  });

  it("prints no token for a verifying embedded sandbox (its admin token is a secret), but how to mint one it accepts", async () => {
    const child = spawn(
      process.execPath,
      [
        ...GATEWAY_CLI,
        "--port",
        "0",
        "--sandbox.auth.mode",
        "hs256",
        "--sandbox.auth.secret",
        "start-secret",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    try {
      const port = await listeningPort(child);
      // Printed on stderr right after the listening line: the command, never the token or the secret.
      await waitFor("the mint hint", () => /Mint an admin token[^\n]*\n {2}[^\n]+\n/.test(stderr));
      assert.match(stderr, /ledger-json-gateway token --secret "\$SANDBOX_SECRET"/);
      assert.doesNotMatch(stderr, /start-secret|eyJ/, "neither the secret nor a token on stderr");
      const minted = mint("--secret", "start-secret");
      assert.equal(minted.status, 0, minted.stderr);
      const res = await fetch(`http://127.0.0.1:${port}/v2/version`, {
        headers: { authorization: `Bearer ${minted.stdout.trim()}` },
      });
      assert.equal(res.status, 200);
    } finally {
      await stop(child);
      child.kill("SIGKILL");
    }
  });
});

describe("start-up on a port in use", () => {
  it("exits 1 with one line naming the address when another gateway holds the port", async () => {
    // A port named in advance, as operators do: Linux never lets a second listener join a port
    // it picked itself (port 0), SO_REUSEPORT or not, so that would prove nothing.
    const port = await freePort();
    const first = spawn(process.execPath, [...GATEWAY_CLI, "--port", String(port)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    first.stderr?.resume();
    try {
      const log = new LogLines(first);
      await log.until((e) => e.msg === "gateway listening", "gateway listening", first);

      const second = await runToEnd(["--port", String(port)]);
      assert.equal(second.code, 1);
      assert.equal(
        second.stderr,
        `ledger-json-gateway: cannot listen on 127.0.0.1:${port}: address already in use (another gateway or another process listens there)\n`,
      );
      // Refused before anything started: no sandbox of its own, no listening line.
      assert.equal(second.stdout, "");

      // Every request is the first gateway's: one ledger, so one ledger end for all ten.
      const ends = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const res = await fetch(`http://127.0.0.1:${port}/v2/state/ledger-end`, {
            headers: { authorization: `Bearer ${tokenFor()}` },
          });
          assert.equal(res.status, 200);
          return JSON.stringify(await res.json());
        }),
      );
      assert.equal(new Set(ends).size, 1, ends.join(" "));
    } finally {
      await stop(first);
    }
  });

  it("exits 1 with the same line when a plain node:net server holds the port", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const result = await runToEnd(["--port", String(port)]);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        `ledger-json-gateway: cannot listen on 127.0.0.1:${port}: address already in use (another gateway or another process listens there)\n`,
      );
    } finally {
      holder.close();
    }
  });
});

describe("start-up without a ledger", () => {
  it("warns that the ledger is unreachable, keeps trying, and says when it answers", async () => {
    const ledgerPort = await freePort();
    const child = spawn(
      process.execPath,
      [...GATEWAY_CLI, "--port", "0", "--ledger", `127.0.0.1:${ledgerPort}`],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stderr?.resume();
    let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
    try {
      const log = new LogLines(child);
      const warning = await log.until((e) => e.msg.startsWith("ledger unreachable"), "the warning", child);
      assert.equal(warning.level, 40, "a warning");
      assert.equal(warning.ledger, `127.0.0.1:${ledgerPort}`);
      assert.match(warning.msg, /retrying/);
      // The gateway serves meanwhile, and says why it cannot answer.
      const listening = await log.until((e) => e.msg === "gateway listening", "gateway listening", child);
      const readyz = await fetch(`http://127.0.0.1:${listening.port}/readyz`);
      assert.equal(readyz.status, 503);

      sandbox = await startSandbox({ port: ledgerPort });
      // Each worker has its own channel to the ledger and answers /readyz from it (and the kernel
      // picks the worker of a connection): every one of them must say it reached the ledger.
      const workers = typeof listening.workers === "number" ? listening.workers : 1;
      const reachable = await Promise.all(
        Array.from({ length: workers }, (_, i) =>
          log.until(
            (e) => e.msg === "ledger reachable" && (workers === 1 || e.worker === i + 1),
            `ledger reachable (worker ${i + 1} of ${workers})`,
            child,
          ),
        ),
      );
      for (const entry of reachable) {
        assert.equal(entry.level, 30);
        assert.ok((entry.failedChecks as number) >= 1);
      }
      assert.equal((await fetch(`http://127.0.0.1:${listening.port}/readyz`)).status, 200);
    } finally {
      await stop(child);
      await sandbox?.stop();
    }
  });
});
