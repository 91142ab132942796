import { BodyValidator } from "../../src/endpoints/body-validator.js";
import type { ApiVersion } from "../../src/proto/api-version.js";

const shapes = new BodyValidator();

/** `json` without its null fields: Canton's JSON for an absent optional field, which its specs do not allow. */
export const withoutNulls = (json: unknown): unknown =>
  Array.isArray(json)
    ? json.map(withoutNulls)
    : json !== null && typeof json === "object"
      ? Object.fromEntries(
          Object.entries(json)
            .filter(([, value]) => value !== null)
            .map(([key, value]) => [key, withoutNulls(value)]),
        )
      : json;

/**
 * Throws unless `json` fits Canton's JSON shape `schema` (schemas/components*.json, taken from
 * its OpenAPI/AsyncAPI) of release `version` (default: DEFAULT_API_VERSION). An absent optional
 * field is `null` in Canton's JSON as in ours, which the specs (OpenAPI 3.0, no `nullable`) do
 * not say: nulls are left out before the check.
 */
export function assertCantonShape(schema: string, json: unknown, version?: ApiVersion): void {
  shapes.validate(schema, withoutNulls(json), version);
}
