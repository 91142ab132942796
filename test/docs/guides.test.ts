import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Guides } from "../../src/docs/guides.js";

describe("Guides", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "guides-"));
    writeFileSync(join(dir, "b-guide.md"), "# B guide ##\n\ntext\n");
    writeFileSync(join(dir, "a.md"), "no heading\n");
    writeFileSync(join(dir, "notes.txt"), "# not a guide\n");
    mkdirSync(join(dir, "samples"));
    writeFileSync(join(dir, "samples", "inner.md"), "# inner\n");
    mkdirSync(join(dir, "folder.md"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("lists the Markdown files of the folder itself, sorted, and reads only those", () => {
    const guides = new Guides(dir);
    assert.deepEqual(guides.files, ["a.md", "b-guide.md"]);
    assert.equal(guides.text("b-guide.md"), "# B guide ##\n\ntext\n");
    for (const name of ["notes.txt", "samples/inner.md", "folder.md", "../a.md", "A.md", ""]) {
      assert.equal(guides.text(name), undefined, name);
    }
  });

  it("titles a guide by its first heading, else by its file name", () => {
    const guides = new Guides(dir);
    assert.equal(guides.title("b-guide.md"), "B guide");
    assert.equal(guides.title("a.md"), "a.md");
  });

  it("serves none where there is no docs folder", () => {
    assert.deepEqual(new Guides(join(dir, "missing")).files, []);
  });
});
