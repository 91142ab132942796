import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv } from "ajv";
import { parse } from "yaml";
import { projectRoot } from "../../src/proto/project-root.js";
import { type Stack, startStack } from "../support/stack.js";

const require = createRequire(import.meta.url);
const DOCS = join(projectRoot(), "docs");
/** The guides the gateway serves: every Markdown file of docs/, not of its subfolders. */
const GUIDES = readdirSync(DOCS)
  .filter((name) => name.endsWith(".md"))
  .sort();

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
      "GET /gw/docs/{guide}",
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
      "POST /gw/v2/commands/command-completions",
      "POST /gw/v2/state/active-contracts",
      "POST /gw/v2/updates",
      "POST /gw/v2/updates/flats",
      "POST /gw/v2/updates/trees",
      // Their GET form for a browser's EventSource, opened with a stream ticket (docs/browsers.md).
      "POST /gw/v2/commands/completions/stream-ticket",
      "POST /gw/v2/commands/command-completions/stream-ticket",
      "POST /gw/v2/state/active-contracts/stream-ticket",
      "POST /gw/v2/updates/stream-ticket",
      "POST /gw/v2/updates/flats/stream-ticket",
      "POST /gw/v2/updates/trees/stream-ticket",
      "GET /gw/v2/commands/completions",
      "GET /gw/v2/commands/command-completions",
      "GET /gw/v2/state/active-contracts",
      "GET /gw/v2/updates",
      "GET /gw/v2/updates/flats",
      "GET /gw/v2/updates/trees",
      "POST /gw/v2/stream-tickets/renewal",
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

  it("serves every guide of docs/ as it is, as text/markdown, without a token", async () => {
    assert.ok(GUIDES.includes("operations.md") && GUIDES.length > 10, GUIDES.join(", "));
    for (const guide of GUIDES) {
      const res = await stack.request(`/docs/${guide}`, { token: null });
      assert.equal(res.status, 200, guide);
      assert.equal(res.headers.get("content-type"), "text/markdown; charset=utf-8", guide);
      assert.equal(await res.text(), readFileSync(join(DOCS, guide), "utf8"), guide);
    }
  });

  it("answers any other name with an unknown path's 404, never a file outside the listing", async () => {
    const usual = (await (await stack.request("/docs/no/such/page", { token: null })).json()) as Record<
      string,
      unknown
    >;
    assert.equal(usual.code, "NOT_FOUND");
    const names = [
      "nope.md",
      "operations",
      "OPERATIONS.md",
      "README.md",
      "samples",
      "samples%2Fgateway-samples-1.0.0.dar",
      "..%2FREADME.md",
      "..%2Fpackage.json",
      "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
      "operations.md%00",
    ];
    for (const name of names) {
      const res = await stack.request(`/docs/${name}`, { token: null });
      assert.equal(res.status, 404, name);
      assert.equal(res.headers.get("content-type"), "application/json", name);
      const body = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), Object.keys(usual).sort(), name);
      assert.equal(body.code, usual.code, name);
      assert.equal(body.errorCategory, usual.errorCategory, name);
      assert.equal(body.grpcCodeValue, usual.grpcCodeValue, name);
      assert.equal(body.cause, `No endpoint at GET /gw/docs/${decodeURIComponent(name)}`, name);
    }
  });

  it("links every guide from the OpenAPI document's description, under the path prefix", async () => {
    const document = parse(await (await stack.request("/docs/openapi", { token: null })).text()) as {
      info: { description: string };
      paths: Record<string, { get?: { responses: { "200": { content: Record<string, unknown> } } } }>;
    };
    const links = [...document.info.description.matchAll(/\[([^\]]+)\]\(([^)]+)\)/g)].map((m) => [
      m[1],
      m[2],
    ]);
    assert.deepEqual(
      links.map(([, href]) => href),
      GUIDES.map((guide) => `/gw/docs/${guide}`),
    );
    assert.ok(
      links.some(([title]) => title === "Operations"),
      JSON.stringify(links),
    );
    assert.ok(
      links.some(([title]) => title === "Differences from Canton's JSON API"),
      JSON.stringify(links),
    );
    for (const [, href] of links) {
      const res = await fetch(`${stack.url.replace(/\/gw$/, "")}${href}`);
      await res.arrayBuffer();
      assert.equal(res.status, 200, href);
    }
    assert.deepEqual(Object.keys(document.paths["/gw/docs/{guide}"]?.get?.responses["200"].content ?? {}), [
      "text/markdown",
    ]);
  });
});
