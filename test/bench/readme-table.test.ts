import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { latestCommittedResult, machine, resultFileName } from "../../bench/lib/results.js";
import { readmeWithTable } from "../../bench/readme-table.js";
import { projectRoot } from "../../src/proto/project-root.js";

const ROOT = projectRoot();

describe("bench results and the README's table", () => {
  it("the README's table is the one rendered from the newest committed result (else: make bench-readme)", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    assert.equal(readmeWithTable(ROOT, readme), readme);
    assert.ok(readme.includes(latestCommittedResult(ROOT).path), "the README names its result file");
  });

  it("names a run's file by its UTC time and commit, so that files sort by time and never collide", () => {
    const commit = { id: "0123456789abcdef0123456789abcdef01234567", dirty: false };
    assert.equal(
      resultFileName(new Date("2026-11-23T09:58:07.123Z"), commit),
      "gateway-2026-11-23T09-58-07Z-0123456.json",
    );
    assert.equal(
      resultFileName(new Date("2026-11-23T09:58:07Z"), { ...commit, dirty: true }),
      "gateway-2026-11-23T09-58-07Z-0123456-dirty.json",
    );
    assert.ok(
      resultFileName(new Date("2026-11-23T09:58:07Z"), commit) <
        resultFileName(new Date("2026-11-23T10:00:00Z"), commit),
    );
  });

  it("describes the machine it ran on", () => {
    const m = machine();
    assert.match(m.cpus, /^\d+ x \S/);
    assert.ok(m.memoryGiB > 0);
    assert.equal(m.node, process.version);
  });
});
