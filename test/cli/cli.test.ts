import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { tokenFor } from "../support/tokens.js";

const CLI = ["--import", "tsx", "src/cli.ts"];

/** Waits for the JSON log line that says the gateway listens, and returns its port. */
async function listeningPort(child: ChildProcess): Promise<number> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === "gateway listening" && typeof entry.port === "number") return entry.port;
  }
  throw new Error("the gateway exited before listening");
}

describe("ledger-json-gateway CLI", () => {
  it("serves on the embedded sandbox and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, [...CLI, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
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

  it("prints its flags and keys with --help", () => {
    const result = spawnSync(process.execPath, [...CLI, "--help"], { encoding: "utf8" });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--ledger, --ledger\.target/);
    assert.match(result.stdout, /websocket-config\.http-list-max-elements-limit/);
    assert.match(result.stdout, /LEDGER_GATEWAY_SERVER_PORT/);
  });

  it("refuses an unknown flag with a clear message and exit code 2", () => {
    const result = spawnSync(process.execPath, [...CLI, "--colour", "blue"], { encoding: "utf8" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /unknown configuration key 'colour' in flag --colour/);
  });
});
