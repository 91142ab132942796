import type { BodyValidator } from "./body-validator.js";
import { parseRequestJson } from "./request-json.js";

/**
 * The client's one query frame -> the request JSON, read and checked against the endpoint's
 * request schema exactly as an HTTP body is (same bounds, same `Invalid value for: body (...)`).
 */
export function parseStreamRequest(text: string, schema: string, validator: BodyValidator): unknown {
  const json = parseRequestJson(text);
  validator.validate(schema, json);
  return json;
}
