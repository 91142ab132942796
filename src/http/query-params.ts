import { isoToTimestamp } from "../codec/index.js";
import type { ParamSpec, QueryValue } from "../endpoints/route.js";
import { InvalidValueError } from "../errors/index.js";

/**
 * Parses the query string against the route's parameters. Unknown parameters are ignored
 * (as Canton does); a malformed value is `Invalid value for: query parameter <name>`.
 */
export function parseQuery(
  raw: string,
  specs: readonly ParamSpec[] = [],
): Record<string, QueryValue | undefined> {
  const params = new URLSearchParams(raw);
  const out: Record<string, QueryValue | undefined> = {};
  for (const spec of specs) {
    const values = params.getAll(spec.name);
    const location = `query parameter ${spec.name}`;
    if (values.length === 0) {
      if (spec.required) throw new InvalidValueError(location, "missing");
      continue;
    }
    if (spec.type === "string[]") {
      // Both `?p=a&p=b` and `?p=a,b` are seen from clients.
      out[spec.name] = values.flatMap((v) => v.split(",")).filter((v) => v !== "");
      continue;
    }
    out[spec.name] = parseScalar(spec, values[values.length - 1] as string, location);
  }
  return out;
}

export function parsePathParams(
  raw: Record<string, string>,
  specs: readonly ParamSpec[] = [],
): Record<string, string> {
  for (const spec of specs) {
    const value = raw[spec.name];
    if (value === undefined || value === "") throw new InvalidValueError(`path parameter ${spec.name}`);
    if (spec.type !== "string") parseScalar(spec, value, `path parameter ${spec.name}`);
  }
  return raw;
}

function parseScalar(spec: ParamSpec, value: string, location: string): QueryValue {
  switch (spec.type) {
    case "string":
      return value;
    case "boolean":
      if (value === "true" || value === "false") return value === "true";
      throw new InvalidValueError(location, `expected true or false, got ${JSON.stringify(value)}`);
    case "int32":
    case "int64": {
      const limit = spec.type === "int32" ? 2 ** 31 : 2 ** 63;
      if (/^-?\d+$/.test(value) && Math.abs(Number(value)) < limit) return Number(value);
      throw new InvalidValueError(location, `expected an integer, got ${JSON.stringify(value)}`);
    }
    case "date-time":
      if (isoToTimestamp(value) !== undefined) return value;
      throw new InvalidValueError(location, `expected an ISO-8601 timestamp, got ${JSON.stringify(value)}`);
    case "string[]":
      return [value];
  }
}
