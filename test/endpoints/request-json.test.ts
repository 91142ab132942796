import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { MAX_REQUEST_JSON_DEPTH, parseRequestJson } from "../../src/endpoints/request-json.js";
import { InvalidValueError } from "../../src/errors/index.js";

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** The error parseRequestJson refuses `text` with; fails the test if it accepts it. */
function refused(text: string): InvalidValueError {
  try {
    parseRequestJson(text);
  } catch (error) {
    if (error instanceof InvalidValueError) return error;
    throw error;
  }
  throw new Error("accepted");
}

describe("parseRequestJson", () => {
  it("reads JSON that nests as deeply as the bound allows, arrays and objects alike", () => {
    deepStrictEqual(parseRequestJson('{"a":[1,{"b":"c"}]}'), { a: [1, { b: "c" }] });
    let value = parseRequestJson(objects(MAX_REQUEST_JSON_DEPTH)) as Record<string, unknown>;
    for (let i = 1; i < MAX_REQUEST_JSON_DEPTH; i++) value = value.a as Record<string, unknown>;
    deepStrictEqual(value, { a: 1 });
    parseRequestJson(arrays(MAX_REQUEST_JSON_DEPTH));
  });

  it("refuses one level more as the client's invalid value, arrays, objects and a mix", () => {
    for (const text of [
      arrays(MAX_REQUEST_JSON_DEPTH + 1),
      objects(MAX_REQUEST_JSON_DEPTH + 1),
      `{"x":${arrays(MAX_REQUEST_JSON_DEPTH)}}`,
    ]) {
      deepStrictEqual(
        refused(text).message,
        `Invalid value for: body (nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels)`,
      );
    }
  });

  it("refuses 200,000 levels without overflowing the stack", () => {
    deepStrictEqual(refused(arrays(200_000)).location, "body");
    deepStrictEqual(refused(objects(200_000)).location, "body");
  });

  it("refuses a megabyte of nested brackets without parsing it (what made one user's frames stall a worker)", () => {
    const parse = mock.method(JSON, "parse");
    try {
      for (const text of [arrays(500_000), objects(100_000), `{"a":${arrays(500_000)}}`])
        deepStrictEqual(refused(text).message.includes("nested deeper"), true);
      deepStrictEqual(parse.mock.callCount(), 0);
      parseRequestJson(arrays(10));
      deepStrictEqual(parse.mock.callCount(), 1);
    } finally {
      parse.mock.restore();
    }
  });

  it("does not count brackets in strings, escaped quotes included", () => {
    const text = JSON.stringify({ s: `\\"${"[{".repeat(5_000)}`, t: ["]", "\\", '"{'] });
    deepStrictEqual(parseRequestJson(text), JSON.parse(text));
  });

  it("counts depth, not brackets: many siblings at one level are fine", () => {
    const wide = `[${Array.from({ length: 5_000 }, () => "[{}]").join(",")}]`;
    deepStrictEqual((parseRequestJson(wide) as unknown[]).length, 5_000);
  });

  it("answers what is no JSON as before, with the parser's words, at the location given", () => {
    const error = refused("{nope");
    deepStrictEqual(error.location, "body");
    deepStrictEqual(error.message.startsWith("Invalid value for: body ("), true);
    throws(
      () => parseRequestJson("[", "query frame"),
      /^InvalidValueError: Invalid value for: query frame \(/,
    );
  });
});
