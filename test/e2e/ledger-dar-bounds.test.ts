import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { zipBombDar } from "../lf/zip-bomb.js";
import { type Stack, startStack } from "../support/stack.js";

interface JsError {
  code: string;
  cause: string;
  context: Record<string, string>;
  errorCategory: number;
}

/**
 * A 300 KB DAR that inflates to 300 MiB is refused with Canton's ZIP_BOMB before the sandbox
 * (in the gateway's process by default) inflates it; it used to take the memory and then
 * refuse the entry as an unparsable archive.
 */
describe("DAR uploads are bounded in what they inflate to", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  for (const path of ["/v2/dars", "/v2/dars/validate"]) {
    it(`answers a zip bomb on ${path} with ZIP_BOMB`, async () => {
      const res = await stack.request(path, {
        method: "POST",
        body: zipBombDar(300),
        headers: { "Content-Type": "application/octet-stream" },
      });
      strictEqual(res.status, 400);
      const body = (await res.json()) as JsError;
      deepStrictEqual(
        { code: body.code, cause: body.cause, msg: body.context.msg, category: body.errorCategory },
        {
          code: "ZIP_BOMB",
          cause: "Dar zip file seems to be a zip bomb.",
          msg: "An entry is too large, rejected as a possible zip bomb",
          category: 8,
        },
      );
    });
  }
});
