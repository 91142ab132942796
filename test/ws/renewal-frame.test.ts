import { deepStrictEqual, ok } from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { MAX_REQUEST_JSON_DEPTH } from "../../src/endpoints/request-json.js";
import { InvalidValueError } from "../../src/errors/index.js";
import { renewalFrame } from "../../src/ws/renewal-frame.js";

describe("renewalFrame", () => {
  it("reads a renewal, with or without the acknowledgement asked, whitespace before it included", () => {
    deepStrictEqual(renewalFrame('{"token":"a.b.c"}'), { token: "a.b.c", acknowledge: false });
    deepStrictEqual(renewalFrame(' \n\t{"token":"a.b.c","acknowledge":true}'), {
      token: "a.b.c",
      acknowledge: true,
    });
    // Other members are ignored, nested ones too, up to a request's depth.
    deepStrictEqual(renewalFrame(`{"token":"t","x":${"[".repeat(50)}${"]".repeat(50)}}`), {
      token: "t",
      acknowledge: false,
    });
  });

  it("refuses an object whose token is not a non-empty string, without echoing it", () => {
    for (const [text, got] of [
      ['{"token":""}', "an empty string"],
      ['{"token":null}', "null"],
      ['{"token":["secret"]}', "a JSON array"],
      ['{"token":{"jwt":"secret"}}', "a JSON object"],
      ['{"token":42}', "a JSON number"],
    ] as const) {
      const refusal = renewalFrame(text);
      ok(refusal instanceof InvalidValueError, text);
      ok(refusal.message.endsWith(`got ${got})`), refusal.message);
      ok(!refusal.message.includes("secret"));
    }
  });

  it("ignores every other frame: no JSON, no object, no token", () => {
    for (const text of ["", "   ", "{", "nope", "[1,2]", '"token"', "null", '{"tok":"x"}', '[{"token":"x"}]'])
      deepStrictEqual(renewalFrame(text), undefined, text);
  });

  it("ignores a megabyte of nesting unparsed, arrays or objects (what made one user's frames stall a worker)", () => {
    const parse = mock.method(JSON, "parse");
    try {
      const arrays = `${"[".repeat(500_000)}${"]".repeat(500_000)}`;
      const objects = `${'{"a":'.repeat(150_000)}1${"}".repeat(150_000)}`;
      const deepToken = `{"token":"t","x":${"[".repeat(MAX_REQUEST_JSON_DEPTH + 1)}${"]".repeat(MAX_REQUEST_JSON_DEPTH + 1)}}`;
      for (const text of [arrays, objects, deepToken]) deepStrictEqual(renewalFrame(text), undefined);
      deepStrictEqual(parse.mock.callCount(), 0);
    } finally {
      parse.mock.restore();
    }
  });
});
