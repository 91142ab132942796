import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { projectRoot } from "../../src/proto/project-root.js";
import { GATEWAY_CLI } from "../support/gateway-cli.js";

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as {
  version: string;
};

describe("--version", () => {
  for (const command of [[], ["token"], ["bench"], ["--ledger", "127.0.0.1:1", "--port", "0"]]) {
    it(`answers the package's version on stdout, exit 0: ledger-json-gateway ${command.join(" ")} --version`, async () => {
      const { stdout, stderr } = await run(process.execPath, [...GATEWAY_CLI, ...command, "--version"], {
        timeout: 60_000,
      });
      assert.equal(stdout, `ledger-json-gateway ${version}\n`);
      assert.equal(stderr, "");
    });
  }

  it("is a value where a flag takes one, not the version flag", async () => {
    const answered = await run(process.execPath, [...GATEWAY_CLI, "--port", "--version"], {
      timeout: 60_000,
    }).then(
      () => assert.fail("exit 0"),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.equal(answered.code, 2);
    assert.equal(answered.stdout, "");
    assert.match(answered.stderr, /bad value "--version" for server\.port/);
  });
});
