import type { FromJson } from "./converters.js";
import { describeJson, InvalidJsonError } from "./json-path.js";

/** Protobuf scalars from JSON request values; the int64 family is a JSON number on output. */

export const INT64_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const INT32_TYPES = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32"]);

export function scalarFromJson(type: string): FromJson {
  if (type === "string") {
    return (json, path) => {
      if (typeof json === "string") return json;
      throw new InvalidJsonError(path, `expected a string, got ${describeJson(json)}`);
    };
  }
  if (type === "bool") {
    return (json, path) => {
      if (typeof json === "boolean") return json;
      throw new InvalidJsonError(path, `expected a boolean, got ${describeJson(json)}`);
    };
  }
  if (INT64_TYPES.has(type) || INT32_TYPES.has(type)) {
    const is64 = INT64_TYPES.has(type);
    return (json, path) => {
      const text = typeof json === "number" ? String(json) : typeof json === "string" ? json.trim() : "";
      if (!/^-?\d+$/.test(text) || (!is64 && Math.abs(Number(text)) > 2 ** 32)) {
        throw new InvalidJsonError(path, `expected an integer, got ${describeJson(json)}`);
      }
      return is64 ? text : Number(text);
    };
  }
  if (type === "double" || type === "float") {
    return (json, path) => {
      if (typeof json === "number") return json;
      throw new InvalidJsonError(path, `expected a number, got ${describeJson(json)}`);
    };
  }
  if (type === "bytes") {
    return (json, path) => {
      if (typeof json === "string" && /^[A-Za-z0-9+/_-]*={0,2}$/.test(json))
        return Buffer.from(json, "base64");
      throw new InvalidJsonError(path, `expected base64 text, got ${describeJson(json)}`);
    };
  }
  throw new Error(`unsupported protobuf scalar type ${type}`);
}
