import type protobuf from "protobufjs";
import type { ValueCodec } from "../../lf/index.js";
import {
  enumTypeOf,
  type MessageLayout,
  messageLayout,
  messageTypeOf,
  type OneofLayout,
  typeNameOf,
  writesNullWhenAbsent,
} from "../rules/message-layout.js";
import type { FromJson, ObjectConverter, ToJson } from "./converters.js";
import { damlFieldsFromJson, damlFieldsToJson } from "./daml-fields.js";
import { childPath, describeJson, InvalidJsonError } from "./json-path.js";
import { INT64_TYPES, scalarFromJson } from "./scalar-objects.js";
import { serializedFromJson, serializedToJson } from "./serialized-objects.js";
import { WELL_KNOWN_OBJECTS } from "./well-known-objects.js";

/**
 * The object path: protobuf messages in the object shape @grpc/proto-loader gives (see
 * PROTO_OPTIONS) <-> JSON objects of the JSON Ledger API. Converters are compiled once per
 * message type from its layout (rules/message-layout.ts: reflection + the rule table), so
 * every message of the protos follows the same rules: int64 family as JSON numbers; bytes
 * base64; enums by name; absent fields with presence null; missing request fields take their
 * defaults; unknown request fields ignored, as Canton's relaxed decoder does.
 */
export class MessageCodec {
  private readonly toJsonCache = new Map<string, ToJson>();
  private readonly fromJsonCache = new Map<string, FromJson>();

  constructor(
    private readonly root: protobuf.Root,
    private readonly values: ValueCodec,
  ) {}

  toJson(typeName: string, message: unknown, context?: unknown): unknown {
    return this.messageToJson(typeName)(message, context);
  }

  fromJson(typeName: string, json: unknown, path = "", context?: unknown): unknown {
    return this.messageFromJson(typeName)(json, path, context);
  }

  private messageToJson(typeName: string): ToJson {
    const known = this.toJsonCache.get(typeName);
    if (known) return known;
    return this.compileInto(this.toJsonCache, typeName, "toJson", (layout) =>
      layout.flatten ? this.flattenedToJson(layout) : this.compileToJson(layout),
    );
  }

  private messageFromJson(typeName: string): FromJson {
    const known = this.fromJsonCache.get(typeName);
    if (known) return known;
    return this.compileInto(this.fromJsonCache, typeName, "fromJson", (layout) =>
      layout.flatten ? this.flattenedFromJson(layout) : this.compileFromJson(layout),
    );
  }

  /** Compiles one direction's converter into its cache; a forwarder stands in meanwhile (recursive types). */
  private compileInto<D extends keyof ObjectConverter>(
    cache: Map<string, ObjectConverter[D]>,
    typeName: string,
    direction: D,
    compile: (layout: MessageLayout) => ObjectConverter[D],
  ): ObjectConverter[D] {
    let converter: ObjectConverter[D] | undefined;
    const forward = (...args: unknown[]) => (converter as (...a: unknown[]) => unknown)(...args);
    cache.set(typeName, forward as ObjectConverter[D]);
    const layout = messageLayout(this.root.lookupType(typeName));
    converter = layout.wellKnown ? WELL_KNOWN_OBJECTS[layout.wellKnown][direction] : compile(layout);
    cache.set(typeName, converter);
    return converter;
  }

  private compileToJson(layout: MessageLayout): ToJson {
    type Step = (message: Record<string, unknown>, out: Record<string, unknown>, context: unknown) => void;
    const steps: Step[] = [];
    for (const field of layout.plain) {
      const serialized = layout.serialized.has(field.name) ? messageTypeOf(field) : undefined;
      const convert = serialized ? serializedToJson(serialized) : this.valueToJson(field);
      const name = field.name;
      const absent = writesNullWhenAbsent(field) ? null : undefined;
      steps.push((message, out, context) => {
        const value = message[name];
        if (value === undefined || value === null) {
          if (absent === null) out[name] = null;
          return;
        }
        out[name] = convert(value, context);
      });
    }
    for (const oneof of layout.oneofs) {
      const cases = this.casesToJson(oneof);
      const oneofName = oneof.name;
      const empty = oneof.emptyKey;
      steps.push((message, out, context) => {
        out[oneofName] = caseToJson(cases, message, context) ?? { [empty]: {} };
      });
    }
    if (layout.daml.length > 0) steps.push(damlFieldsToJson(layout.daml, this.values));
    return (message, context) => {
      const out: Record<string, unknown> = {};
      for (const step of steps) step(message as Record<string, unknown>, out, context);
      return out;
    };
  }

  /** A message that is its oneof alone; it has no JSON without a case. */
  private flattenedToJson(layout: MessageLayout): ToJson {
    const cases = this.casesToJson(layout.oneofs[0] as OneofLayout);
    const typeName = layout.typeName;
    return (message, context) => {
      const json = caseToJson(cases, message as Record<string, unknown>, context);
      if (json === undefined) throw new Error(`${typeName} has no case set`);
      return json;
    };
  }

  private casesToJson(oneof: OneofLayout): CaseToJson[] {
    return oneof.cases.map((c) => ({
      name: c.field.name,
      key: c.key,
      wrapped: c.wrapped,
      convert: this.valueToJson(c.field),
    }));
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
    const message = messageTypeOf(field);
    if (message) {
      const typeName = typeNameOf(message);
      return (value, context) => this.messageToJson(typeName)(value, context);
    }
    if (INT64_TYPES.has(field.type)) return (value) => Number(value);
    if (field.type === "bytes") return (value) => Buffer.from(value as Uint8Array).toString("base64");
    return (value) => value;
  }

  private compileFromJson(layout: MessageLayout): FromJson {
    const fields = new Map<string, FromJson>();
    for (const field of layout.plain) {
      const serialized = layout.serialized.has(field.name) ? messageTypeOf(field) : undefined;
      fields.set(field.name, serialized ? serializedFromJson(serialized) : this.valueFromJson(field));
    }
    const oneofs = new Map<string, CasesFromJson>();
    for (const oneof of layout.oneofs) oneofs.set(oneof.name, this.casesFromJson(oneof));
    const daml = layout.daml.length > 0 ? damlFieldsFromJson(layout.daml, this.values) : undefined;
    return (json, path, context) => {
      const object = expectObject(json, path);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(object)) {
        if (value === null || value === undefined) continue;
        const here = childPath(path, key);
        const plain = fields.get(key);
        if (plain) {
          out[key] = plain(value, here, context);
          continue;
        }
        const cases = oneofs.get(key);
        if (cases) Object.assign(out, oneofFromJson(cases, value, here, context));
      }
      daml?.(object, out, path, context);
      return out;
    };
  }

  /** `{"Case": content}` alone; anything but exactly one known case is an error. */
  private flattenedFromJson(layout: MessageLayout): FromJson {
    const cases = this.casesFromJson(layout.oneofs[0] as OneofLayout);
    const expected = `expected an object with exactly one of ${[...cases.byKey.keys()].join(", ")}`;
    return (json, path, context) => {
      const entries =
        json !== null && typeof json === "object" && !Array.isArray(json) ? Object.entries(json) : [];
      const [entry] = entries;
      const chosen = entry && cases.byKey.get(entry[0]);
      if (entries.length !== 1 || !entry || !chosen) throw new InvalidJsonError(path, expected);
      return caseFromJson(chosen, entry[1], childPath(path, entry[0]), context);
    };
  }

  private casesFromJson(oneof: OneofLayout): CasesFromJson {
    return {
      emptyKey: oneof.emptyKey,
      byKey: new Map(
        oneof.cases.map((c) => [
          c.key,
          { name: c.field.name, wrapped: c.wrapped, convert: this.valueFromJson(c.field) },
        ]),
      ),
    };
  }

  private valueFromJson(field: protobuf.Field): FromJson {
    const single = this.scalarOrMessageFromJson(field);
    if (field.map) {
      return (json, path, context) =>
        Object.fromEntries(
          Object.entries(expectObject(json, path)).map(([k, v]) => [
            k,
            single(v, childPath(path, k), context),
          ]),
        );
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
    const message = messageTypeOf(field);
    if (message) {
      const typeName = typeNameOf(message);
      return (json, path, context) => this.messageFromJson(typeName)(json, path, context);
    }
    const enumType = enumTypeOf(field);
    if (enumType) {
      const names = new Set(Object.keys(enumType.values));
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

interface CaseToJson {
  readonly name: string;
  readonly key: string;
  readonly wrapped: boolean;
  readonly convert: ToJson;
}

interface CaseFromJson {
  readonly name: string;
  readonly wrapped: boolean;
  readonly convert: FromJson;
}

interface CasesFromJson {
  readonly emptyKey: string;
  readonly byKey: ReadonlyMap<string, CaseFromJson>;
}

/** The JSON of the first case set, undefined when none is. */
function caseToJson(cases: readonly CaseToJson[], message: Record<string, unknown>, context: unknown) {
  for (const set of cases) {
    const value = message[set.name];
    if (value === undefined || value === null) continue;
    const content = set.convert(value, context);
    const json: Record<string, unknown> = {};
    json[set.key] = set.wrapped ? { value: content } : content;
    return json;
  }
  return undefined;
}

function oneofFromJson(
  cases: CasesFromJson,
  json: unknown,
  path: string,
  context: unknown,
): Record<string, unknown> {
  const keys = [...cases.byKey.keys()];
  const entries =
    json !== null && typeof json === "object" && !Array.isArray(json) ? Object.entries(json) : [];
  if (entries.length !== 1) {
    throw new InvalidJsonError(
      path,
      `expected an object with exactly one of ${[...keys, cases.emptyKey].join(", ")}`,
    );
  }
  const [caseName, content] = entries[0] as [string, unknown];
  if (caseName === cases.emptyKey) return {};
  const chosen = cases.byKey.get(caseName);
  if (!chosen)
    throw new InvalidJsonError(path, `unknown case ${caseName}; expected one of ${keys.join(", ")}`);
  return caseFromJson(chosen, content, childPath(path, caseName), context);
}

function caseFromJson(chosen: CaseFromJson, content: unknown, path: string, context: unknown) {
  if (!chosen.wrapped) return { [chosen.name]: chosen.convert(content, path, context) };
  const value =
    content !== null && typeof content === "object" && "value" in content ? content.value : undefined;
  // A case whose content is an empty message may be written without `value`.
  return { [chosen.name]: chosen.convert(value ?? {}, childPath(path, "value"), context) };
}

function expectObject(json: unknown, path: string): Record<string, unknown> {
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new InvalidJsonError(path, `expected an object, got ${describeJson(json)}`);
  }
  return json as Record<string, unknown>;
}
