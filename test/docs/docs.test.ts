import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv } from "ajv";
import { parse } from "yaml";
import { type Stack, startStack } from "../support/stack.js";

const require = createRequire(import.meta.url);

interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>>;
}

describe("/docs", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--path-prefix", "/gw"]);
  });
  after(() => stack.stop());

  it("serves a valid OpenAPI 3.0 document without a token", async () => {
    const res = await stack.request("/docs/openapi", { token: null });
    assert.equal(res.status, 200);
    const document = parse(await res.text()) as OpenApi;
    assert.equal(document.openapi, "3.0.3");
    const result = await new Validator().validate(
      document as unknown as Parameters<Validator["validate"]>[0],
    );
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  });

  it("lists every route of the gateway, under the path prefix, with Canton's operation ids", async () => {
    const document = parse(await (await stack.request("/docs/openapi", { token: null })).text()) as OpenApi;
    const listed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const expected = [
      "GET /gw/livez",
      "GET /gw/readyz",
      "GET /gw/metrics",
      "GET /gw/docs/openapi",
      "GET /gw/docs/asyncapi",
      "GET /gw/v2/version",
      "GET /gw/v2/state/ledger-end",
      "GET /gw/v2/state/latest-pruned-offsets",
      "GET /gw/v2/state/connected-synchronizers",
      "GET /gw/v2/parties",
      "POST /gw/v2/parties",
      "GET /gw/v2/parties/participant-id",
      "GET /gw/v2/parties/{party}",
      "PATCH /gw/v2/parties/{party}",
      "GET /gw/v2/users",
      "POST /gw/v2/users",
      "GET /gw/v2/users/{user-id}",
      "PATCH /gw/v2/users/{user-id}",
      "DELETE /gw/v2/users/{user-id}",
      "GET /gw/v2/authenticated-user",
      "GET /gw/v2/users/{user-id}/rights",
      "POST /gw/v2/users/{user-id}/rights",
      "PATCH /gw/v2/users/{user-id}/rights",
      "PATCH /gw/v2/users/{user-id}/identity-provider-id",
      "GET /gw/v2/idps",
      "POST /gw/v2/idps",
      "GET /gw/v2/idps/{idp-id}",
      "PATCH /gw/v2/idps/{idp-id}",
      "DELETE /gw/v2/idps/{idp-id}",
      "GET /gw/v2/state/active-contracts-page",
      "POST /gw/v2/state/active-contracts-page",
      "POST /gw/v2/commands/submit-and-wait",
      "POST /gw/v2/commands/submit-and-wait-for-transaction",
      "POST /gw/v2/commands/submit-and-wait-for-transaction-tree",
      "POST /gw/v2/commands/submit-and-wait-for-reassignment",
      "POST /gw/v2/commands/async/submit",
      "POST /gw/v2/commands/async/submit-reassignment",
      "POST /gw/v2/updates/update-by-offset",
      "POST /gw/v2/updates/update-by-id",
      "POST /gw/v2/updates/get-updates-page",
      "POST /gw/v2/updates/transaction-by-offset",
      "POST /gw/v2/updates/transaction-by-id",
      "GET /gw/v2/updates/transaction-tree-by-offset/{offset}",
      "GET /gw/v2/updates/transaction-tree-by-id/{update-id}",
      "POST /gw/v2/events/events-by-contract-id",
      "POST /gw/v2/contracts/contract-by-id",
      // Packages, DARs, vetting, package preference.
      "GET /gw/v2/packages",
      "POST /gw/v2/packages",
      "GET /gw/v2/packages/{package-id}",
      "GET /gw/v2/packages/{package-id}/status",
      "POST /gw/v2/dars",
      "POST /gw/v2/dars/validate",
      "GET /gw/v2/package-vetting",
      "POST /gw/v2/package-vetting",
      "POST /gw/v2/package-vetting/list",
      "POST /gw/v2/package-vetting/update",
      "GET /gw/v2/interactive-submission/preferred-package-version",
      "POST /gw/v2/interactive-submission/preferred-packages",
      "POST /gw/v2/interactive-submission/prepare",
      "POST /gw/v2/interactive-submission/execute",
      "POST /gw/v2/interactive-submission/executeAndWait",
      "POST /gw/v2/interactive-submission/executeAndWaitForTransaction",
      "POST /gw/v2/parties/external/generate-topology",
      "POST /gw/v2/parties/external/allocate",
      // HTTP list twins of the stream endpoints.
      "POST /gw/v2/commands/completions",
      "POST /gw/v2/state/active-contracts",
      "POST /gw/v2/updates",
      "POST /gw/v2/updates/flats",
      "POST /gw/v2/updates/trees",
    ];
    assert.deepEqual([...listed].sort(), [...expected].sort());
    assert.equal(
      document.paths["/gw/v2/parties/participant-id"]?.get?.operationId,
      "getV2PartiesParticipant-id",
    );
    assert.equal(document.paths["/gw/v2/parties/{party}"]?.patch?.operationId, "patchV2PartiesParty");
    assert.ok(document.paths["/gw/v2/version"]?.get?.security, "token routes declare their security");
    assert.equal(document.paths["/gw/livez"]?.get?.security, undefined);
  });

  it("serves both documents as application/yaml and says so in the OpenAPI document", async () => {
    for (const path of ["/docs/openapi", "/docs/asyncapi"]) {
      const res = await stack.request(path, { token: null });
      await res.arrayBuffer();
      assert.equal(res.headers.get("content-type"), "application/yaml", path);
    }
    const document = parse(await (await stack.request("/docs/openapi", { token: null })).text()) as {
      paths: Record<string, { get?: { responses: { "200": { content: Record<string, unknown> } } } }>;
    };
    const media = (path: string) => Object.keys(document.paths[path]?.get?.responses["200"].content ?? {});
    assert.deepEqual(media("/gw/docs/openapi"), ["application/yaml"]);
    assert.deepEqual(media("/gw/metrics"), ["text/plain; version=0.0.4"]);
  });

  it("serves a valid AsyncAPI 2.6 document", async () => {
    const res = await stack.request("/docs/asyncapi", { token: null });
    assert.equal(res.status, 200);
    const document = parse(await res.text()) as { asyncapi: string };
    assert.equal(document.asyncapi, "2.6.0");
    const specs = require("@asyncapi/specs") as { schemas: Record<string, object> };
    // The AsyncAPI schema bundles its own copy of the draft-07 meta-schema.
    const ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateFormats: false,
      meta: false,
      validateSchema: false,
    });
    const validate = ajv.compile(specs.schemas["2.6.0"] as object);
    assert.equal(validate(document), true, JSON.stringify(validate.errors)?.slice(0, 2000));
  });
});
