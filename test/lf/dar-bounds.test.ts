import { ok, strictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { readDar } from "../../src/lf/dar.js";
import { DarError } from "../../src/lf/errors.js";
import { zipBombDar } from "./zip-bomb.js";

describe("readDar bounds what a DAR may inflate to", () => {
  it("refuses a DAR whose listed entries inflate past the bound, before inflating them", () => {
    // Past the 256 MiB bound (MAX_DAR_CONTENT_BYTES).
    const inflatedMiB = 300;
    const dar = zipBombDar(inflatedMiB);
    ok(dar.byteLength < 1024 * 1024, `a bomb of ${dar.byteLength} bytes`);
    const rssBefore = process.memoryUsage().rss;
    throws(
      () => readDar(dar),
      (error: unknown) =>
        error instanceof DarError &&
        error.code === "zip-bomb" &&
        error.message === "An entry is too large, rejected as a possible zip bomb",
    );
    // Nothing of the 300 MiB was allocated (generous: other allocations come and go).
    ok(process.memoryUsage().rss - rssBefore < 100 * 1024 * 1024);
  });

  it("still reads a DAR within the bound", () => {
    const dar = zipBombDar(2);
    const contents = readDar(dar);
    strictEqual(contents.main.bytes.byteLength, 2 * 1024 * 1024);
  });
});
