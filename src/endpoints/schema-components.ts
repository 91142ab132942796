import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ApiVersion, DEFAULT_API_VERSION } from "../proto/api-version.js";
import { projectRoot } from "../proto/project-root.js";
import { GATEWAY_SCHEMAS } from "./gateway-schemas.js";

export interface SchemaComponents {
  apiVersion: string;
  schemas: Record<string, unknown>;
}

/** schemas/components-<release>.json: where a release's shapes differ from DEFAULT_API_VERSION's. */
interface SchemaDifferences {
  apiVersion: string;
  schemas: Record<string, unknown>;
  removed: string[];
}

const components = new Map<ApiVersion, SchemaComponents>();

const readSchemas = <T>(file: string): T =>
  JSON.parse(readFileSync(join(projectRoot(), "schemas", file), "utf8")) as T;

/**
 * The JSON shapes of the API in Canton release `version` (see scripts/import-reference-schemas.ts):
 * schemas/components.json, DEFAULT_API_VERSION's, with the differences of `version` applied
 * (schemas/components-<version>.json), and the gateway's own extensions' (gateway-schemas.ts);
 * read once per release. Request validation and the published documents share them.
 */
export function schemaComponents(version: ApiVersion = DEFAULT_API_VERSION): SchemaComponents {
  let found = components.get(version);
  if (found === undefined) {
    const reference = readSchemas<SchemaComponents>("components.json");
    let { apiVersion, schemas } = reference;
    if (version !== DEFAULT_API_VERSION) {
      const differences = readSchemas<SchemaDifferences>(`components-${version}.json`);
      const removed = new Set(differences.removed);
      apiVersion = differences.apiVersion;
      schemas = Object.fromEntries(
        Object.entries({ ...schemas, ...differences.schemas })
          .filter(([name]) => !removed.has(name))
          .sort(([a], [b]) => a.localeCompare(b)),
      );
    }
    found = { apiVersion, schemas: { ...schemas, ...GATEWAY_SCHEMAS } };
    components.set(version, found);
  }
  return found;
}
