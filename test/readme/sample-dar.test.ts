import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readDar } from "../../src/lf/dar.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { SAMPLE_PACKAGE_ID, sampleDalf, sampleDar } from "../../src/sandbox/sample-package/index.js";
import { SAMPLE_DAR_PATH } from "./sample-dar.js";

const committed = new Uint8Array(readFileSync(join(projectRoot(), SAMPLE_DAR_PATH)));

describe(`the committed sample DAR (${SAMPLE_DAR_PATH})`, () => {
  it("is byte-identical to the DAR the sandbox builds and serves (else: make sample-dar)", () => {
    assert.equal(
      committed.length,
      sampleDar.length,
      "size differs: run `make sample-dar` and commit the file",
    );
    assert.ok(Buffer.from(committed).equals(Buffer.from(sampleDar)), "bytes differ: run `make sample-dar`");
  });

  it("holds as its main package the very archive the sandbox preloads, under its package id", () => {
    const { main, manifest } = readDar(committed);
    assert.ok(Buffer.from(main.bytes).equals(Buffer.from(sampleDalf)));
    assert.equal(manifest.get("Name"), "gateway-samples-1.0.0");
    assert.ok(main.path.endsWith(`${SAMPLE_PACKAGE_ID}.dalf`), main.path);
    assert.match(SAMPLE_PACKAGE_ID, /^[0-9a-f]{64}$/);
  });
});
