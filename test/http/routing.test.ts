import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

interface JsCantonError {
  code: string;
  cause: string;
  errorCategory: number;
  grpcCodeValue: number | null;
  context: Record<string, string>;
}

describe("routing, tokens and malformed requests", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--server.path-prefix", "/api/", "--server.max-body-bytes", "1024"]);
  });
  after(() => stack.stop());

  it("serves every route under the path prefix only", async () => {
    assert.equal((await stack.request("/v2/version")).status, 200);
    const outside = await fetch(`${stack.url.replace(/\/api$/, "")}/v2/version`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    assert.equal(outside.status, 404);
    assert.equal((await stack.request("/livez", { token: null })).status, 200);
  });

  it("answers an unknown route with a 404 JsCantonError", async () => {
    const res = await stack.request("/v2/nothing-here");
    assert.equal(res.status, 404);
    const body = (await res.json()) as JsCantonError;
    assert.equal(body.code, "NOT_FOUND");
    assert.equal(body.errorCategory, 11);
  });

  it("answers a known path with the wrong method with 405", async () => {
    const res = await stack.request("/v2/version", { method: "DELETE" });
    assert.equal(res.status, 405);
    assert.equal(((await res.json()) as JsCantonError).code, "METHOD_NOT_ALLOWED");
  });

  it("passes a /v2 request without a token to the ledger, which decides (the sandbox's redacted 401)", async () => {
    // The gateway verifies no token itself (auth.mode none): a ledger without auth would serve it.
    const res = await stack.request("/v2/state/ledger-end", { token: null });
    assert.equal(res.status, 401);
    const body = (await res.json()) as JsCantonError & { traceId: string | null };
    assert.equal(body.code, "NA");
    assert.equal(body.cause, "A security-sensitive error has been received");
    assert.equal(body.errorCategory, -1);
    assert.equal(body.grpcCodeValue, 16);
    assert.match(body.traceId ?? "", /^[0-9a-f]{32}$/);
  });

  it("answers a token that is not a JWT with the ledger's redacted 401, as Canton decodes it", async () => {
    const res = await stack.request("/v2/state/ledger-end", { token: "not-a-jwt" });
    assert.equal(res.status, 401);
    const body = (await res.json()) as JsCantonError & { traceId: string | null };
    assert.equal(body.code, "NA");
    assert.equal(body.cause, "A security-sensitive error has been received");
    assert.equal(body.errorCategory, -1);
    assert.equal(body.grpcCodeValue, 16);
    assert.match(body.traceId ?? "", /^[0-9a-f]{32}$/);
  });

  it("answers malformed JSON with 400 text/plain naming the body", async () => {
    const res = await stack.request("/v2/parties", { method: "POST", body: "{not json" });
    assert.equal(res.status, 400);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    assert.match(await res.text(), /^Invalid value for: body \(/);
  });

  it("answers a body of the wrong shape with 400 naming the field", async () => {
    const res = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: 42 }));
    assert.equal(res.status, 400);
    assert.equal(await res.text(), "Invalid value for: body (must be string at /partyIdHint)");
  });

  it("answers a malformed query value with 400 naming the parameter", async () => {
    const res = await stack.request("/v2/parties?pageSize=many");
    assert.equal(res.status, 400);
    assert.equal(
      await res.text(),
      'Invalid value for: query parameter pageSize (expected an integer, got "many")',
    );
  });

  it("refuses a body over the configured limit with 413", async () => {
    const res = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "x".repeat(2048) }));
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as JsCantonError).code, "REQUEST_TOO_LARGE");
  });

  it("accepts JSON whatever the Content-Type says", async () => {
    const res = await stack.request("/v2/parties", {
      ...jsonBody("POST", { partyIdHint: `ct-${Date.now()}` }),
      headers: { "content-type": "text/plain" },
    });
    assert.equal(res.status, 200);
  });
});
