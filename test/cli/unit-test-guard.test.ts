import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot } from "../../src/proto/project-root.js";

const GUARD = join(projectRoot(), "test", "cli", "unit-test-guard.ts");

/** `make test-unit`'s command over one test file; its exit code and what it printed. */
async function testUnit(file: string): Promise<{ status: number | null; output: string }> {
  // Not this file's test context: a runner started inside a test file runs nothing.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "--import", GUARD, "--test", file], {
    cwd: projectRoot(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const [status] = (await once(child, "exit")) as [number | null];
  return { status, output };
}

const TESTS = {
  "pure.test.mjs": `import { test } from "node:test";
import { spawnSync } from "node:child_process";
test("adds", () => { if (1 + 1 !== 2) throw new Error("no"); });`,
  "connects.test.mjs": `import { test } from "node:test";
import { connect } from "node:net";
test("connects", () => { connect(9, "127.0.0.1").on("error", () => {}); });`,
  "spawns.test.mjs": `import { test } from "node:test";
import { spawnSync } from "node:child_process";
test("spawns", () => { spawnSync(process.execPath, ["--version"]); });`,
  "listens.test.mjs": `import { test } from "node:test";
import { createServer } from "node:http";
test("listens", () => { createServer().listen(0).close(); });`,
};

describe("make test-unit's guard (test/cli/unit-test-guard.ts)", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "unit-test-guard-"));
    for (const [name, text] of Object.entries(TESTS)) await writeFile(join(dir, name), text);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("lets a test that starts nothing pass, named imports of child_process and all", async () => {
    const result = await testUnit(join(dir, "pure.test.mjs"));
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /^# pass 1$/m);
  });

  it("fails a test that connects a socket, starts a process or listens, naming the file and the list", async () => {
    const results = await Promise.all(
      [
        ["connects.test.mjs", "connects a socket"],
        ["spawns.test.mjs", "starts a process (child_process.spawnSync)"],
        ["listens.test.mjs", "listens on a socket"],
      ].map(async ([name, what]) => ({ name, what, ...(await testUnit(join(dir, name as string))) })),
    );
    for (const { name, what, status, output } of results) {
      assert.equal(status, 1, `${name}: ${output}`);
      assert.ok(
        output.includes(`${join(dir, name as string)} ${what}: take it out of UNIT_TESTS in the Makefile`),
        `${name}: ${output}`,
      );
    }
  });
});
