import type { FromJson } from "./converters.js";
import { describeJson, InvalidJsonError } from "./json-path.js";

/** Protobuf scalars from JSON request values; the int64 family is a JSON number on output. */

export const INT64_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

/** The values each protobuf integer type holds. */
const INTEGER_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

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
  const range = INTEGER_RANGES[type];
  if (range !== undefined) {
    const is64 = INT64_TYPES.has(type);
    const [min, max] = range;
    return (json, path) => {
      const text = typeof json === "number" ? String(json) : typeof json === "string" ? json.trim() : "";
      if (!/^-?\d+$/.test(text)) {
        throw new InvalidJsonError(path, `expected an integer, got ${describeJson(json)}`);
      }
      // protobufjs would wrap a value outside the field's type silently (2^64 became 384).
      const value = BigInt(text);
      if (value < min || value > max) {
        throw new InvalidJsonError(
          path,
          `expected an integer from ${min} to ${max}, got ${describeJson(json)}`,
        );
      }
      return is64 ? value.toString() : Number(value);
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
