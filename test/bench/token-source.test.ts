import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openTokenSource } from "../../bench/load/token-source.js";
import { until } from "../support/until.js";

describe("the load tool's token source", () => {
  const dir = mkdtempSync(join(tmpdir(), "token-source-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads --token-file again when the file changes, and says so without the token", async () => {
    const file = join(dir, "token");
    writeFileSync(file, "first.token.value\n");
    const lines: string[] = [];
    const source = await openTokenSource({ file }, (line) => lines.push(line));
    try {
      assert.equal(source.current(), "first.token.value");
      writeFileSync(file, "second.token.value-which-is-longer\n");
      await until(() => source.current() === "second.token.value-which-is-longer", { budgetMs: 30_000 });
      assert.deepEqual(lines, [`token: --token-file ${file} changed, read again`]);
      writeFileSync(file, "");
      await until(() => lines.length === 2, { budgetMs: 30_000 });
      assert.equal(
        source.current(),
        "second.token.value-which-is-longer",
        "an emptied file keeps the last token",
      );
      assert.match(lines[1] as string, /is empty; keeping the one read before/);
      assert.ok(!lines.join("\n").includes("token.value"), "the token is never in a line");
    } finally {
      source.close();
    }
  });

  it("runs --party-token-command with the party in LOAD_PARTY, and names the party when it fails", async () => {
    const source = await openTokenSource(
      { command: 'printf %s "token-of-$LOAD_PARTY"', party: "alice::1220ab" },
      () => undefined,
    );
    try {
      assert.equal(source.current(), "token-of-alice::1220ab");
    } finally {
      source.close();
    }
    await assert.rejects(
      openTokenSource({ command: 'test "$LOAD_PARTY" = nobody', party: "bob::1220cd" }, () => undefined),
      /^Error: --party-token-command for bob::1220cd failed \(exit status 1\)$/,
    );
  });

  it("refuses a missing file and a failing command, naming them but not what they printed", async () => {
    await assert.rejects(
      openTokenSource({ file: join(dir, "nope") }, () => undefined),
      /cannot read --token-file .*nope: ENOENT/,
    );
    await assert.rejects(
      openTokenSource({ command: "echo secret-output; exit 3" }, () => undefined),
      (error: Error) =>
        /--token-command failed \(exit status 3\)/.test(error.message) &&
        !error.message.includes("secret-output"),
    );
    await assert.rejects(
      openTokenSource({ command: "true" }, () => undefined),
      /--token-command failed/,
    );
  });
});
