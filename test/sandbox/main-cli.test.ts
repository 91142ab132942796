import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { gatewayOnSandbox } from "../support/gateway-on-sandbox.js";
import { startSandboxProcess } from "../support/sandbox-process.js";

const MAIN = ["--import", "tsx", "src/sandbox/main.ts"];
const run = (...args: string[]) =>
  spawnSync(process.execPath, [...MAIN, ...args], { encoding: "utf8", timeout: 30_000 });

describe("standalone sandbox command line (src/sandbox/main.ts)", () => {
  it("prints its options for --help and exits 0", () => {
    const result = run("--help");
    assert.equal(result.status, 0);
    assert.match(result.stdout, /^Usage: /);
    for (const option of [
      "--port",
      "--api-version",
      "--auth-mode",
      "--preload",
      "--idle-stream-offset-checkpoint-timeout-ms",
    ])
      assert.ok(result.stdout.includes(option), `--help names ${option}`);
  });

  it("answers an unknown option with the fault and the usage line, exit code 2, no stack trace", () => {
    const result = run("--prot", "6865");
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      "sandbox: Unknown option '--prot' (--help lists the options)\n" +
        "usage: node --import tsx src/sandbox/main.ts [options]   (after a build: node dist/src/sandbox/main.js)\n",
    );
  });

  it("answers a bad value with one line naming the option, before it starts anything", () => {
    const result = run("--auth-mode", "none");
    assert.equal(result.status, 2);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /^sandbox: --auth-mode must be one of unsafe, hs256, rs256, es256 /);
    assert.equal(result.stderr.split("\n").length, 2);
  });

  it("refuses a Canton release it does not speak, naming those it does", () => {
    const result = run("--api-version", "3.4.0");
    assert.equal(result.status, 2);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /^sandbox: --api-version must be one of 3\.5\.4, 3\.5\.10, 3\.6\.0 /);
  });

  it("speaks and reports the release --api-version names", async () => {
    const sandbox = await startSandboxProcess({ args: ["--api-version", "3.6.0"] });
    const { gateway } = await gatewayOnSandbox(sandbox, "version");
    try {
      const res = await fetch(`http://127.0.0.1:${gateway.port}/v2/version`);
      assert.equal(((await res.json()) as { version: string }).version, "3.6.0");
      const removed = await fetch(`http://127.0.0.1:${gateway.port}/v2/updates/flats`, {
        method: "POST",
        body: "{}",
      });
      assert.equal(removed.status, 404);
    } finally {
      await gateway.stop(500);
      await sandbox.stop();
    }
  });
});
