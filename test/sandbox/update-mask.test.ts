import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { decodePartyPageToken, encodePartyPageToken } from "../../src/sandbox/services/party-page-token.js";
import { isUpdateMaskError, parseUpdateMask, updateMaskErrorReason } from "../../src/sandbox/update-mask.js";

const FIELDS = ["party", "is_local", "local_metadata.annotations", "local_metadata.resource_version"];

describe("update mask (Canton's UpdatePathsTrie semantics)", () => {
  it("matches a field exactly or through its parent path", () => {
    const mask = parseUpdateMask(["local_metadata", "is_local"], FIELDS);
    if (isUpdateMaskError(mask)) throw new Error("valid mask rejected");
    strictEqual(mask.match("is_local"), "exact");
    strictEqual(mask.match("local_metadata.annotations"), "parent");
    strictEqual(mask.match("party"), undefined);
  });

  it("rejects a path below a leaf field and a trailing dot", () => {
    deepStrictEqual(parseUpdateMask(["is_local.x"], FIELDS), { kind: "unknown", path: "is_local.x" });
    deepStrictEqual(parseUpdateMask(["local_metadata."], FIELDS), {
      kind: "unknown",
      path: "local_metadata.",
    });
  });

  it("shortens long paths in the reason as Canton does", () => {
    const reason = updateMaskErrorReason({ kind: "unknown", path: "x".repeat(60) });
    strictEqual(reason, `The update path: '${"x".repeat(50)}...' points to an unknown field.`);
  });
});

describe("ListKnownParties page token", () => {
  it("round-trips a party and is padded URL-safe base64 of the protobuf payload", () => {
    const token = encodePartyPageToken("alice::1220ab");
    strictEqual(token, Buffer.from([0x0a, 13, ...Buffer.from("alice::1220ab")]).toString("base64"));
    strictEqual(decodePartyPageToken(token), "alice::1220ab");
  });

  it("refuses tokens that are not base64url or carry another field", () => {
    strictEqual(decodePartyPageToken("a+b/"), undefined);
    strictEqual(decodePartyPageToken(Buffer.from([0x12, 1, 0x41]).toString("base64url")), undefined);
  });
});
