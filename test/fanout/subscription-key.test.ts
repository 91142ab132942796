import { deepStrictEqual, notDeepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { subscriptionKey, tokenDigest } from "../../src/fanout/subscription-key.js";

const key = (request: Record<string, unknown>, token?: string) =>
  subscriptionKey({ path: "/v2/updates", request, token });

describe("subscriptionKey", () => {
  it("is the path and the request as JSON with keys sorted at every level, without beginExclusive", () => {
    const request = {
      beginExclusive: 7,
      verbose: true,
      filter: { b: [3, { z: null, y: "s" }], a: "x" },
      dropped: undefined,
    };
    deepStrictEqual(
      key(request),
      '/v2/updates {"filter":{"a":"x","b":[3,{"y":"s","z":null}]},"verbose":true}',
    );
  });

  it("gives requests that differ only in key order or beginExclusive the same key, others not", () => {
    deepStrictEqual(
      key({ a: { c: 1, d: [1, 2] }, b: 2, beginExclusive: 1 }),
      key({ b: 2, a: { d: [1, 2], c: 1 }, beginExclusive: 9 }),
    );
    notDeepStrictEqual(key({ a: [1, 2] }), key({ a: [2, 1] }));
    notDeepStrictEqual(key({ a: [] }), key({ a: {} }));
    deepStrictEqual(key({ a: [undefined, 'q"]'] }), '/v2/updates {"a":[null,"q\\"]"]}');
  });

  it("holds a digest of the token, never the token", () => {
    const withToken = key({ a: 1 }, "secret-token");
    deepStrictEqual(withToken, `/v2/updates {"a":1} caller:${tokenDigest("secret-token")}`);
    deepStrictEqual(withToken.includes("secret-token"), false);
    // SHA-256 in base64url (FIPS 180-2's "abc" vector), whichever of Node's APIs makes it.
    deepStrictEqual(tokenDigest("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  });

  it("writes a request nested 200,000 levels deep without overflowing the stack", () => {
    let nested: unknown = 1;
    for (let i = 0; i < 200_000; i++) nested = i % 2 === 0 ? { a: nested } : [nested];
    const text = key({ deep: nested });
    deepStrictEqual(text.length, '/v2/updates {"deep":}'.length + 1 + 100_000 * ('{"a":}'.length + 2));
    deepStrictEqual(text.slice(0, 30), '/v2/updates {"deep":[{"a":[{"a');
  });
});
