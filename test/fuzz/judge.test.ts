import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HttpCase, HttpExpectation } from "./cases.js";
import { judgeHttp } from "./execute.js";
import { Prng } from "./prng.js";
import type { RawOutcome } from "./raw-http.js";

/** The fuzzer's judge alone: what it must call a failure, and what it must let pass. */
function httpCase(expect: HttpExpectation = {}, method = "GET"): HttpCase {
  return {
    kind: "http",
    index: 0,
    category: "body",
    label: "a case",
    route: "GET /v2/version",
    request: { method, target: "/v2/version", headers: [] },
    expect,
  };
}

function answer(status: number, body: string, headers: Record<string, string> = {}): RawOutcome {
  return { kind: "answer", status, headers, body: Buffer.from(body), ms: 1 };
}

const cantonError = (code: string, grpcCodeValue: number) =>
  JSON.stringify({ code, cause: "why", grpcCodeValue });

describe("the fuzz judge", () => {
  it("fails a 5xx for a client's request, a hang, and a connection dropped without an answer", () => {
    assert.match(judgeHttp(httpCase(), answer(500, cantonError("X", 13)), "clean").failure ?? "", /^500 /);
    assert.match(
      judgeHttp(httpCase(), answer(503, cantonError("UNAVAILABLE", 14)), "clean").failure ?? "",
      /^503 /,
    );
    assert.ok(judgeHttp(httpCase(), { kind: "timeout", ms: 1 }, "clean").failure);
    assert.ok(judgeHttp(httpCase(), { kind: "closed", ms: 1 }, "clean").failure);
  });

  it("lets pass the upstream conditions: the ledger away during a fault, its UNIMPLEMENTED, 505 for HTTP/2", () => {
    assert.equal(
      judgeHttp(httpCase(), answer(503, cantonError("UNAVAILABLE", 14)), "fault").failure,
      undefined,
    );
    assert.equal(
      judgeHttp(httpCase(), answer(504, cantonError("DEADLINE_EXCEEDED", 4)), "fault").failure,
      undefined,
    );
    assert.equal(
      judgeHttp(httpCase(), answer(501, cantonError("UNIMPLEMENTED", 12)), "clean").failure,
      undefined,
    );
    assert.equal(
      judgeHttp(httpCase({ may505: true }), answer(505, cantonError("V", 12)), "clean").failure,
      undefined,
    );
    assert.match(judgeHttp(httpCase(), answer(505, cantonError("V", 12)), "clean").failure ?? "", /^505 /);
  });

  it("holds a token attack to its statuses, accepting Canton's INVALID_TOKEN", () => {
    const attack = httpCase({ statuses: [401] });
    assert.match(judgeHttp(attack, answer(200, "{}"), "clean").failure ?? "", /expected 401, got 200/);
    assert.equal(judgeHttp(attack, answer(401, cantonError("NA", 16)), "clean").failure, undefined);
    assert.equal(judgeHttp(attack, answer(400, cantonError("INVALID_TOKEN", 3)), "clean").failure, undefined);
  });

  it("wants errors as Invalid value text or a JsCantonError, and Allow on a 405", () => {
    assert.ok(
      judgeHttp(httpCase(), answer(431, "<h1>Request Header Fields Too Large</h1>"), "clean").failure,
    );
    assert.equal(
      judgeHttp(httpCase(), answer(400, "Invalid value for: query parameter limit"), "clean").failure,
      undefined,
    );
    assert.match(judgeHttp(httpCase(), answer(405, cantonError("M", 5)), "clean").failure ?? "", /Allow/);
    assert.equal(
      judgeHttp(httpCase(), answer(405, cantonError("M", 5), { allow: "GET, HEAD" }), "clean").failure,
      undefined,
    );
  });

  it("lets bytes that are not HTTP be refused by closing the connection", () => {
    assert.equal(
      judgeHttp(httpCase({ mayClose: true }), { kind: "closed", ms: 1 }, "clean").failure,
      undefined,
    );
    assert.match(
      judgeHttp(httpCase({ mayClose: true }), { kind: "timeout", ms: 1 }, "clean").failure ?? "",
      /held/,
    );
  });
});

describe("the fuzz PRNG", () => {
  it("gives the same numbers for the same seed and stream, and others for another", () => {
    const draw = (seed: number, stream: number) => {
      const rng = new Prng(seed, stream);
      return Array.from({ length: 8 }, () => rng.uint32());
    };
    assert.deepEqual(draw(7, 3), draw(7, 3));
    assert.notDeepEqual(draw(7, 3), draw(7, 4));
    assert.notDeepEqual(draw(7, 3), draw(8, 3));
    const rng = new Prng(1);
    for (let i = 0; i < 1000; i++) {
      const n = rng.between(-2, 2);
      assert.ok(n >= -2 && n <= 2 && Number.isInteger(n));
    }
    assert.equal(new Prng(5).bytes(3).length, 3);
  });
});
