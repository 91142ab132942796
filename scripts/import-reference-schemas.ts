/**
 * Development tool, run by hand when the reference specs change (not part of the build: tsc
 * compiles src/, test/ and bench/ into dist/, and scripts/ only type-checks, in `make lint`):
 *   node --import tsx scripts/import-reference-schemas.ts ../shared/reference
 * Takes the JSON shapes (facts only: types, properties, required, enums, formats) of Canton's
 * OpenAPI/AsyncAPI component schemas into schemas/components.json; prose (descriptions,
 * titles, examples) is dropped. The gateway validates request bodies against these shapes
 * and publishes them in /docs/openapi and /docs/asyncapi.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
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
const openapi = parse(readFileSync(join(referenceDir, "openapi-3.5.10.yaml"), "utf8"));
const asyncapi = parse(readFileSync(join(referenceDir, "asyncapi-3.5.10.yaml"), "utf8"));
const schemas: Record<string, unknown> = {};
for (const [name, schema] of Object.entries(openapi.components.schemas)) schemas[name] = strip(schema);
for (const [name, schema] of Object.entries(asyncapi.components.schemas)) {
  if (!(name in schemas)) schemas[name] = strip(schema);
}
// Canton 3.6 (until the schemas are kept per release): its new components, which no 3.5 name
// collides with; the JWKS answer, which its spec gives inline; and the 3.6 form of the components
// it widened (a new kind of right, the transactions' and completions' `transactionHash`), which
// every 3.5 document also fits.
const openapi36 = parse(readFileSync(join(referenceDir, "openapi-3.6.yaml"), "utf8"));
const asyncapi36 = parse(readFileSync(join(referenceDir, "asyncapi-3.6.yaml"), "utf8"));
const WIDENED_IN_3_6 = new Set(["Kind", "JsTransaction", "Completion1"]);
for (const [name, schema] of Object.entries({
  ...asyncapi36.components.schemas,
  ...openapi36.components.schemas,
})) {
  if (!(name in schemas) || WIDENED_IN_3_6.has(name)) schemas[name] = strip(schema);
}
schemas.GetJwksResponse = strip(
  openapi36.paths["/v2/jose/jwks/synchronizer/{synchronizer}/party/{party}"].get.responses["200"].content[
    "application/json"
  ].schema,
);
const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
const target = join(projectRoot(), "schemas", "components.json");
writeFileSync(target, `${JSON.stringify({ apiVersion: openapi.info.version, schemas: sorted }, null, 1)}\n`);
console.log(`wrote ${Object.keys(sorted).length} schemas to ${target}`);
