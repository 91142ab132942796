import { InvalidValueError } from "../errors/index.js";
import type { BodyValidator } from "./body-validator.js";

/**
 * The client's one query frame -> the request JSON, checked against the endpoint's request
 * schema exactly as an HTTP body is (same `Invalid value for: body (...)` wording).
 */
export function parseStreamRequest(text: string, schema: string, validator: BodyValidator): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidValueError("body", (error as Error).message);
  }
  validator.validate(schema, json);
  return json;
}
