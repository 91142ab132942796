import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../proto/project-root.js";
import { GATEWAY_SCHEMAS } from "./gateway-schemas.js";

export interface SchemaComponents {
  apiVersion: string;
  schemas: Record<string, unknown>;
}

let components: SchemaComponents | undefined;

/**
 * schemas/components.json: the JSON shapes of the API (see scripts/import-reference-schemas.ts),
 * with the gateway's own extensions' (gateway-schemas.ts), read once; request validation and the
 * published documents share them.
 */
export function schemaComponents(): SchemaComponents {
  if (components === undefined) {
    const reference = JSON.parse(
      readFileSync(join(projectRoot(), "schemas", "components.json"), "utf8"),
    ) as SchemaComponents;
    components = { ...reference, schemas: { ...reference.schemas, ...GATEWAY_SCHEMAS } };
  }
  return components;
}
