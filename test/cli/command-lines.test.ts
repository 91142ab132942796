import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { GATEWAY_CLI } from "../support/gateway-cli.js";

/** A command as a user runs it, from its source, to its end. */
async function run(
  argv: readonly string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const [status] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { status, stdout, stderr };
}

interface Command {
  name: string;
  argv: readonly string[];
  /** What its --help names: an option and a default. */
  help: readonly RegExp[];
  /** A flag it knows that takes a value. */
  valued: string;
}

/** Every command a user runs: the gateway, its token command, the standalone sandbox, the bench. */
const COMMANDS: readonly Command[] = [
  {
    name: "the gateway",
    argv: GATEWAY_CLI,
    help: [/--port, --server\.port/, /\(default 7575\)/],
    valued: "--port",
  },
  {
    name: "token",
    argv: [...GATEWAY_CLI, "token"],
    help: [/--expires-in D/, /default participant_admin/],
    valued: "--user",
  },
  {
    name: "the sandbox",
    argv: ["--import", "tsx", "src/sandbox/main.ts"],
    help: [/--auth-mode M/, /\(default 6865\)/],
    valued: "--port",
  },
  {
    name: "the bench",
    argv: ["--import", "tsx", "bench/rig/run.ts"],
    help: [/\[--ticks 100000\]/],
    valued: "--ticks",
  },
];

const STACK_FRAME = /\n\s+at /;

describe("every command's command line", () => {
  for (const command of COMMANDS) {
    it(`${command.name} prints its usage, options and defaults for --help and -h, exit 0`, async () => {
      const [long, short] = await Promise.all([
        run([...command.argv, "--help"]),
        run([...command.argv, "-h"]),
      ]);
      for (const result of [long, short]) {
        assert.equal(result.status, 0, result.stderr);
        assert.equal(result.stderr, "");
        assert.match(result.stdout, /^usage:/i);
        for (const pattern of command.help) assert.match(result.stdout, pattern);
      }
      assert.equal(short.stdout, long.stdout);
    });

    it(`${command.name} refuses an unknown flag and a flag without its value with exit 2, starting nothing`, async () => {
      const [unknown, missing] = await Promise.all([
        run([...command.argv, "--bogus", "1"]),
        run([...command.argv, command.valued]),
      ]);
      for (const result of [unknown, missing]) {
        assert.equal(result.status, 2, result.stderr);
        assert.equal(result.stdout, "", "nothing started, nothing printed on stdout");
        assert.doesNotMatch(result.stderr, STACK_FRAME, "no stack trace");
      }
      assert.match(unknown.stderr, /--bogus/);
      assert.match(missing.stderr, new RegExp(`${command.valued}\\b.*(needs a value|argument missing)`));
    });
  }

  it("the gateway puts its usage line under the fault: an unknown flag, a missing value, a positional", async () => {
    const usage =
      "usage: ledger-json-gateway [--config FILE] [--port N] [--ledger embedded|HOST:PORT] [--<key> VALUE ...] (--help lists the keys)\n";
    const [unknown, missing, positional] = await Promise.all([
      run([...GATEWAY_CLI, "--prot", "7575"]),
      run([...GATEWAY_CLI, "--port"]),
      run([...GATEWAY_CLI, "serve"]),
    ]);
    assert.equal(
      unknown.stderr,
      `ledger-json-gateway: unknown configuration key 'prot' in flag --prot; did you mean --port?\n${usage}`,
    );
    assert.equal(missing.stderr, `ledger-json-gateway: flag --port needs a value\n${usage}`);
    assert.equal(positional.stderr, `ledger-json-gateway: unexpected argument 'serve'\n${usage}`);
    for (const result of [unknown, missing, positional]) assert.equal(result.status, 2);
  });

  it("the gateway answers a bad value with the fault alone: the flag was read, its value is wrong", async () => {
    const result = await run([...GATEWAY_CLI, "--port", "x"]);
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      'ledger-json-gateway: bad value "x" for server.port in flag --port: expected an integer from 0 to 65535\n',
    );
  });
});
