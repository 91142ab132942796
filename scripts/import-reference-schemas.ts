/**
 * Development tool, run by hand when the reference specs change (not part of the build: tsc
 * compiles src/, test/ and bench/ into dist/, and scripts/ only type-checks, in `make lint`):
 *   node --import tsx scripts/import-reference-schemas.ts ../shared/reference
 * Takes the JSON shapes (facts only: types, properties, required, enums, formats) of Canton's
 * OpenAPI/AsyncAPI component schemas; prose (descriptions, titles, examples) is dropped. The
 * gateway validates request bodies against these shapes and publishes them in /docs/openapi and
 * /docs/asyncapi, those of the Canton release it serves (docs/canton-versions.md):
 * - schemas/components.json: the shapes of DEFAULT_API_VERSION (3.5.10), whole;
 * - schemas/components-<release>.json for each other known release: only where its shapes
 *   differ from those (`schemas`: added or changed, whole; `removed`: the names it lacks), so
 *   that what changed between releases reads at a glance;
 * - schemas/operations.json: each release's operations (`METHOD path`, with the component schema
 *   of a success: `X`, `X[]` for a list, null for none) and WebSocket channels (the schemas of
 *   the query frame and of an element), which the conformance tests enumerate
 *   (test/e2e/version-conformance.test.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { type ApiVersion, DEFAULT_API_VERSION, KNOWN_API_VERSIONS } from "../src/proto/api-version.js";
import { projectRoot } from "../src/proto/project-root.js";

const PROSE = new Set(["description", "title", "example", "examples"]);

/**
 * `unknownFields` is a scalapb artefact the specs mark required (FieldMask, Duration); no
 * client sends it and Canton ignores it, so requiring it would reject well-meant requests.
 */
const NEVER_REQUIRED = new Set(["unknownFields"]);

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (PROSE.has(key) && typeof value === "string") continue;
    if (key === "required" && Array.isArray(value)) {
      const kept = value.filter((name) => !NEVER_REQUIRED.has(name));
      if (kept.length > 0) out[key] = kept;
      continue;
    }
    out[key] =
      key === "properties"
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v)]))
        : strip(value);
  }
  return out;
}

const referenceDir = process.argv[2] ?? "../shared/reference";

/** The reference files of each known release (../shared/reference/VERSIONS.md). */
const REFERENCE_FILES: Record<ApiVersion, string> = {
  "3.5.4": "3.5",
  "3.5.10": "3.5.10",
  "3.6.0": "3.6",
};

const specsOf = (version: ApiVersion) => {
  const suffix = REFERENCE_FILES[version];
  return {
    openapi: parse(readFileSync(join(referenceDir, `openapi-${suffix}.yaml`), "utf8")),
    asyncapi: parse(readFileSync(join(referenceDir, `asyncapi-${suffix}.yaml`), "utf8")),
  };
};

const schemaName = (ref: unknown): string | undefined =>
  typeof ref === "string" ? ref.split("/").pop() : undefined;

/** A success's schema: `X`, `X[]`, or null (no body, or one that is no component). */
function successSchema(operation: {
  responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}): string | null {
  const content = operation.responses?.["200"]?.content;
  const schema = content === undefined ? undefined : Object.values(content)[0]?.schema;
  if (schema === undefined) return null;
  const single = schemaName(schema.$ref);
  if (single !== undefined) return single;
  const items = schemaName((schema.items as Record<string, unknown> | undefined)?.$ref);
  return items === undefined ? null : `${items}[]`;
}

function operationsOf(version: ApiVersion) {
  const { openapi, asyncapi } = specsOf(version);
  const operations: Record<string, string | null> = {};
  for (const [path, methods] of Object.entries(openapi.paths as Record<string, Record<string, object>>))
    for (const [method, operation] of Object.entries(methods))
      operations[`${method.toUpperCase()} ${path}`] = successSchema(operation);
  const channels: Record<string, { request: string; response: string }> = {};
  for (const [path, channel] of Object.entries(
    asyncapi.channels as Record<string, Record<string, { message: { $ref: string } }>>,
  )) {
    const messages = asyncapi.components.messages;
    const payload = (message: { $ref: string } | undefined) =>
      schemaName(messages[schemaName(message?.$ref) ?? ""]?.payload?.$ref) ?? "";
    const either = asyncapi.components.schemas[payload(channel.subscribe?.message)];
    const element = (either?.oneOf as { $ref: string }[] | undefined)
      ?.map((one) => schemaName(one.$ref))
      .find((name) => name !== "JsCantonError");
    channels[path] = { request: payload(channel.publish?.message), response: element ?? "" };
  }
  return { apiVersion: openapi.info.version, operations, channels };
}

const JWKS_PATH = "/v2/jose/jwks/synchronizer/{synchronizer}/party/{party}";

function shapesOf(version: ApiVersion): { apiVersion: string; schemas: Record<string, unknown> } {
  const { openapi, asyncapi } = specsOf(version);
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(openapi.components.schemas)) schemas[name] = strip(schema);
  for (const [name, schema] of Object.entries(asyncapi.components.schemas)) {
    if (!(name in schemas)) schemas[name] = strip(schema);
  }
  // 3.6's JWKS answer has no component of its own: its spec gives it inline, named here.
  const jwks = openapi.paths[JWKS_PATH]?.get.responses["200"].content["application/json"].schema;
  if (jwks !== undefined) schemas.GetJwksResponse = strip(jwks);
  return { apiVersion: openapi.info.version, schemas: sortedByName(schemas) };
}

const sortedByName = (schemas: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));

const write = (file: string, json: unknown) => {
  const target = join(projectRoot(), "schemas", file);
  writeFileSync(target, `${JSON.stringify(json, null, 1)}\n`);
  return target;
};

const base = shapesOf(DEFAULT_API_VERSION);
console.log(`wrote ${Object.keys(base.schemas).length} schemas to ${write("components.json", base)}`);
for (const version of KNOWN_API_VERSIONS) {
  if (version === DEFAULT_API_VERSION) continue;
  const { apiVersion, schemas } = shapesOf(version);
  const differing = Object.fromEntries(
    Object.entries(schemas).filter(
      ([name, schema]) => JSON.stringify(schema) !== JSON.stringify(base.schemas[name]),
    ),
  );
  const removed = Object.keys(base.schemas).filter((name) => !(name in schemas));
  const target = write(`components-${version}.json`, {
    apiVersion,
    differsFrom: DEFAULT_API_VERSION,
    schemas: differing,
    removed,
  });
  console.log(
    `wrote ${Object.keys(differing).length} added or changed and ${removed.length} removed schemas to ${target}`,
  );
}

const operations = Object.fromEntries(KNOWN_API_VERSIONS.map((version) => [version, operationsOf(version)]));
console.log(
  `wrote the operations and channels of ${KNOWN_API_VERSIONS.join(", ")} to ${write("operations.json", operations)}`,
);
