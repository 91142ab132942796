import type protobuf from "protobufjs";
import { childPath, describeJson, InvalidJsonError } from "./json-path.js";
import { isoToTimestamp, type ProtoTimestamp, timestampToIso } from "./timestamps.js";

/**
 * Protobuf messages (in the object shape @grpc/proto-loader gives, see PROTO_OPTIONS) <->
 * the JSON of the JSON Ledger API, driven by reflection so that every message of the
 * protos is covered by the same rules:
 * - fields camelCase; int64 family as JSON numbers; bytes base64; enums by name;
 * - a oneof is an object under the oneof's name keyed by the case in PascalCase, the case's
 *   content under `value` (`{"kind": {"CanActAs": {"value": {"party": "p"}}}}`), an unset
 *   oneof `{"Empty": {}}`;
 * - Timestamp as ISO text, Identifier as `package:Module:Entity`;
 * - absent message fields are left out; missing request fields take their defaults.
 * Messages whose JSON is shaped by hand (Daml values, Js* wrappers) plug in as overrides.
 */
/**
 * `context` travels unchanged through one conversion to every override (e.g. the package ids
 * that `#package-name` references resolved to for this request).
 */
export type ToJson = (message: unknown, context?: unknown) => unknown;
export type FromJson = (json: unknown, path: string, context?: unknown) => unknown;

export interface MessageOverride {
  toJson?: ToJson;
  fromJson?: FromJson;
}

const INT64_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const INT32_TYPES = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32"]);

const WELL_KNOWN: Record<string, MessageOverride> = {
  "google.protobuf.Timestamp": {
    toJson: (m) => timestampToIso(m as ProtoTimestamp),
    fromJson: (json, path) => {
      const ts = typeof json === "string" ? isoToTimestamp(json) : undefined;
      if (ts === undefined)
        throw new InvalidJsonError(path, `expected an ISO-8601 timestamp, got ${describeJson(json)}`);
      return ts;
    },
  },
  "google.protobuf.Empty": { toJson: () => ({}), fromJson: () => ({}) },
  // protobufjs bundles Any with its proto field name `type_url`; the JSON API writes ProtoAny.
  "google.protobuf.Any": {
    toJson: (m) => {
      const any = m as { type_url?: string; typeUrl?: string; value?: Uint8Array };
      return {
        typeUrl: any.type_url ?? any.typeUrl ?? "",
        value: Buffer.from(any.value ?? new Uint8Array()).toString("base64"),
        unknownFields: { fields: {} },
      };
    },
    fromJson: (json, path) => {
      const any = json as { typeUrl?: unknown; value?: unknown } | null;
      if (
        any === null ||
        typeof any !== "object" ||
        typeof any.typeUrl !== "string" ||
        typeof any.value !== "string"
      ) {
        throw new InvalidJsonError(path, `expected {typeUrl, value}, got ${describeJson(json)}`);
      }
      return { type_url: any.typeUrl, value: Buffer.from(any.value, "base64") };
    },
  },
  "com.daml.ledger.api.v2.Identifier": {
    toJson: (m) => {
      const id = m as { packageId: string; moduleName: string; entityName: string };
      return `${id.packageId}:${id.moduleName}:${id.entityName}`;
    },
    fromJson: (json, path) => {
      const parts = typeof json === "string" ? splitIdentifier(json) : undefined;
      if (parts === undefined) {
        throw new InvalidJsonError(
          path,
          `expected an identifier package:Module:Entity, got ${describeJson(json)}`,
        );
      }
      return parts;
    },
  },
};

/** `pkg:Mod.Sub:Entity` — the package part may itself start with `#` (package-name form). */
export function splitIdentifier(text: string) {
  const first = text.indexOf(":");
  const last = text.lastIndexOf(":");
  if (first <= 0 || last === first || last === text.length - 1) return undefined;
  return {
    packageId: text.slice(0, first),
    moduleName: text.slice(first + 1, last),
    entityName: text.slice(last + 1),
  };
}

export function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

export class ProtoJsonCodec {
  private readonly toJsonCache = new Map<string, ToJson>();
  private readonly fromJsonCache = new Map<string, FromJson>();
  private readonly genericToJsonCache = new Map<string, ToJson>();
  private readonly genericFromJsonCache = new Map<string, FromJson>();
  private readonly overrides: Record<string, MessageOverride>;

  constructor(
    private readonly root: protobuf.Root,
    overrides: Record<string, MessageOverride> = {},
  ) {
    this.overrides = { ...WELL_KNOWN, ...overrides };
  }

  toJson(typeName: string, message: unknown, context?: unknown): unknown {
    return this.messageToJson(typeName)(message, context);
  }

  fromJson(typeName: string, json: unknown, path = "", context?: unknown): unknown {
    return this.messageFromJson(typeName)(json, path, context);
  }

  /** The generic conversion of a message, for overrides that adjust a few fields of it. */
  genericToJson(typeName: string, message: unknown, context?: unknown): Record<string, unknown> {
    let compiled = this.genericToJsonCache.get(typeName);
    if (!compiled) {
      compiled = this.compileToJson(this.lookup(typeName));
      this.genericToJsonCache.set(typeName, compiled);
    }
    return compiled(message, context) as Record<string, unknown>;
  }

  genericFromJson(typeName: string, json: unknown, path: string, context?: unknown): Record<string, unknown> {
    let compiled = this.genericFromJsonCache.get(typeName);
    if (!compiled) {
      compiled = this.compileFromJson(this.lookup(typeName));
      this.genericFromJsonCache.set(typeName, compiled);
    }
    return compiled(json, path, context) as Record<string, unknown>;
  }

  private lookup(typeName: string): protobuf.Type {
    return this.root.lookupType(typeName);
  }

  private messageToJson(typeName: string): ToJson {
    let converter = this.toJsonCache.get(typeName);
    if (converter) return converter;
    const override = this.overrides[typeName]?.toJson;
    if (override) {
      converter = override;
    } else {
      // Recursive types: register a forwarder before compiling the fields.
      let compiled: ToJson | undefined;
      this.toJsonCache.set(typeName, (m, c) => (compiled as ToJson)(m, c));
      compiled = this.compileToJson(this.lookup(typeName));
      converter = compiled;
    }
    this.toJsonCache.set(typeName, converter);
    return converter;
  }

  private messageFromJson(typeName: string): FromJson {
    let converter = this.fromJsonCache.get(typeName);
    if (converter) return converter;
    const override = this.overrides[typeName]?.fromJson;
    if (override) {
      converter = override;
    } else {
      let compiled: FromJson | undefined;
      this.fromJsonCache.set(typeName, (j, p, c) => (compiled as FromJson)(j, p, c));
      compiled = this.compileFromJson(this.lookup(typeName));
      converter = compiled;
    }
    this.fromJsonCache.set(typeName, converter);
    return converter;
  }

  private compileToJson(type: protobuf.Type): ToJson {
    const steps: ((
      message: Record<string, unknown>,
      out: Record<string, unknown>,
      context: unknown,
    ) => void)[] = [];
    for (const field of type.fieldsArray) {
      if (isRealOneof(field)) continue;
      const convert = this.valueToJson(field);
      const name = field.name;
      steps.push((message, out, context) => {
        const value = message[name];
        if (value === undefined || value === null) return;
        out[name] = convert(value, context);
      });
    }
    for (const oneof of type.oneofsArray) {
      if (isSyntheticOneof(oneof)) continue;
      const cases = oneof.fieldsArray.map((field) => ({
        name: field.name,
        key: pascalCase(field.name),
        convert: this.valueToJson(field),
      }));
      const oneofName = oneof.name;
      steps.push((message, out, context) => {
        const set = cases.find((c) => message[c.name] !== undefined && message[c.name] !== null);
        out[oneofName] = set
          ? { [set.key]: { value: set.convert(message[set.name], context) } }
          : { Empty: {} };
      });
    }
    return (message, context) => {
      const out: Record<string, unknown> = {};
      for (const step of steps) step(message as Record<string, unknown>, out, context);
      return out;
    };
  }

  private valueToJson(field: protobuf.Field): ToJson {
    const single = this.scalarOrMessageToJson(field);
    if (field.map) {
      return (value, context) =>
        Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, single(v, context)]));
    }
    if (field.repeated) return (value, context) => (value as unknown[]).map((v) => single(v, context));
    return single;
  }

  private scalarOrMessageToJson(field: protobuf.Field): ToJson {
    if (field.resolvedType && "fieldsArray" in field.resolvedType) {
      const typeName = fullName(field.resolvedType);
      return (value, context) => this.messageToJson(typeName)(value, context);
    }
    if (INT64_TYPES.has(field.type)) return (value) => Number(value);
    if (field.type === "bytes") return (value) => Buffer.from(value as Uint8Array).toString("base64");
    return (value) => value;
  }

  private compileFromJson(type: protobuf.Type): FromJson {
    const fields = new Map<string, { field: protobuf.Field; convert: FromJson }>();
    for (const field of type.fieldsArray) {
      if (!isRealOneof(field)) fields.set(field.name, { field, convert: this.valueFromJson(field) });
    }
    const oneofs = new Map<string, Map<string, { name: string; convert: FromJson }>>();
    for (const oneof of type.oneofsArray) {
      if (isSyntheticOneof(oneof)) continue;
      oneofs.set(
        oneof.name,
        new Map(
          oneof.fieldsArray.map((f) => [
            pascalCase(f.name),
            { name: f.name, convert: this.valueFromJson(f) },
          ]),
        ),
      );
    }
    return (json, path, context) => {
      if (json === null || typeof json !== "object" || Array.isArray(json)) {
        throw new InvalidJsonError(path, `expected an object, got ${describeJson(json)}`);
      }
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(json)) {
        // Unknown fields are ignored, as Canton's relaxed decoder does.
        if (value === null || value === undefined) continue;
        const here = childPath(path, key);
        const plain = fields.get(key);
        if (plain) {
          out[key] = plain.convert(value, here, context);
          continue;
        }
        const cases = oneofs.get(key);
        if (cases) Object.assign(out, oneofFromJson(cases, value, here, context));
      }
      return out;
    };
  }

  private valueFromJson(field: protobuf.Field): FromJson {
    const single = this.scalarOrMessageFromJson(field);
    if (field.map) {
      return (json, path, context) => {
        if (json === null || typeof json !== "object" || Array.isArray(json)) {
          throw new InvalidJsonError(path, `expected an object, got ${describeJson(json)}`);
        }
        return Object.fromEntries(
          Object.entries(json).map(([k, v]) => [k, single(v, childPath(path, k), context)]),
        );
      };
    }
    if (field.repeated) {
      return (json, path, context) => {
        if (!Array.isArray(json))
          throw new InvalidJsonError(path, `expected an array, got ${describeJson(json)}`);
        return json.map((v, i) => single(v, childPath(path, i), context));
      };
    }
    return single;
  }

  private scalarOrMessageFromJson(field: protobuf.Field): FromJson {
    const resolved = field.resolvedType;
    if (resolved && "fieldsArray" in resolved) {
      const typeName = fullName(resolved);
      return (json, path, context) => this.messageFromJson(typeName)(json, path, context);
    }
    if (resolved && "values" in resolved) {
      const names = new Set(Object.keys(resolved.values));
      return (json, path) => {
        if (typeof json === "string" && names.has(json)) return json;
        throw new InvalidJsonError(
          path,
          `expected one of ${[...names].join(", ")}, got ${describeJson(json)}`,
        );
      };
    }
    return scalarFromJson(field.type);
  }
}

function oneofFromJson(
  cases: Map<string, { name: string; convert: FromJson }>,
  json: unknown,
  path: string,
  context: unknown,
): Record<string, unknown> {
  const entries =
    json !== null && typeof json === "object" && !Array.isArray(json) ? Object.entries(json) : [];
  if (entries.length !== 1) {
    throw new InvalidJsonError(
      path,
      `expected an object with exactly one of ${[...cases.keys(), "Empty"].join(", ")}`,
    );
  }
  const [caseName, content] = entries[0] as [string, unknown];
  if (caseName === "Empty") return {};
  const chosen = cases.get(caseName);
  if (!chosen)
    throw new InvalidJsonError(
      path,
      `unknown case ${caseName}; expected one of ${[...cases.keys()].join(", ")}`,
    );
  const inner = childPath(path, caseName);
  const value =
    content !== null && typeof content === "object" && "value" in content ? content.value : undefined;
  // A case whose content is an empty message may be written without `value`.
  return { [chosen.name]: chosen.convert(value ?? {}, childPath(inner, "value"), context) };
}

function scalarFromJson(type: string): FromJson {
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

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  // proto3 `optional` makes a one-field oneof named `_<field>`; it is not a JSON oneof.
  return oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0]?.name}`;
}

function isRealOneof(field: protobuf.Field): boolean {
  return field.partOf !== null && field.partOf !== undefined && !isSyntheticOneof(field.partOf);
}

function fullName(reflection: protobuf.ReflectionObject): string {
  return reflection.fullName.replace(/^\./, "");
}
