import type protobuf from "protobufjs";
import { type CaseRule, type DamlFieldRule, MESSAGE_RULES } from "./message-rules.js";
import type { WellKnownKind } from "./well-known.js";

/**
 * A message type as both paths compile it: its reflection (protobufjs) with its rule from
 * message-rules.ts applied, and the plain protobuf mapping of the JSON API for the rest:
 * fields camelCase; a oneof is an object under the oneof's name keyed by the case in
 * PascalCase with the content under `value` (`{"kind": {"CanActAs": {"value": {...}}}}`),
 * an unset oneof `{"Empty": {}}`; a proto3 `optional` field is a plain field; an absent
 * field is written as `writesNullWhenAbsent` says. Members come in this order: plain fields,
 * oneofs, Daml fields.
 */
export interface MessageLayout {
  /** Full name without the leading dot. */
  readonly typeName: string;
  readonly type: protobuf.Type;
  readonly wellKnown?: WellKnownKind;
  /** Fields outside real oneofs, Daml fields excepted. */
  readonly plain: readonly protobuf.Field[];
  readonly oneofs: readonly OneofLayout[];
  /** The message is its single oneof's object alone. */
  readonly flatten: boolean;
  readonly daml: readonly DamlFieldLayout[];
  /** Plain message fields written as the base64 of their serialization (rule `serialized`). */
  readonly serialized: ReadonlySet<string>;
}

interface OneofCaseLayout extends CaseRule {
  readonly field: protobuf.Field;
}

export interface OneofLayout {
  readonly name: string;
  readonly cases: readonly OneofCaseLayout[];
  readonly emptyKey: string;
}

export interface DamlFieldLayout extends DamlFieldRule {
  /** The JSON key (the field name unless renamed). */
  readonly key: string;
  readonly protoField: protobuf.Field;
}

const layouts = new WeakMap<protobuf.Type, MessageLayout>();

export function messageLayout(type: protobuf.Type): MessageLayout {
  let layout = layouts.get(type);
  if (layout === undefined) {
    layout = buildLayout(type);
    layouts.set(type, layout);
  }
  return layout;
}

function buildLayout(type: protobuf.Type): MessageLayout {
  const typeName = typeNameOf(type);
  const rule = MESSAGE_RULES[typeName] ?? {};
  const fieldNamed = (name: string): protobuf.Field => {
    const field = type.fields[name];
    if (!field) throw new Error(`message rule of ${typeName} names no field ${name}`);
    return field;
  };
  const daml = (rule.daml ?? []).map((d) => {
    const first = rule.daml?.[0];
    if (first && (d.owner.join() !== first.owner.join() || d.choice !== first.choice)) {
      throw new Error(`message rule of ${typeName}: Daml fields must name the same owner and choice`);
    }
    for (const name of [...d.owner, ...(d.choice ? [d.choice] : [])]) fieldNamed(name);
    return { ...d, key: d.jsonKey ?? d.field, protoField: fieldNamed(d.field) };
  });
  const damlNames = new Set(daml.map((d) => d.field));
  const cases = rule.oneof?.cases ?? {};
  for (const name of Object.keys(cases)) fieldNamed(name);
  const oneofs = type.oneofsArray
    .filter((oneof) => !isSyntheticOneof(oneof))
    .map((oneof) => ({
      name: oneof.name,
      cases: oneof.fieldsArray.map((field) => ({
        field,
        ...((cases as Record<string, CaseRule>)[field.name] ?? {
          key: pascalCase(field.name),
          wrapped: true,
        }),
      })),
      emptyKey: rule.oneof?.emptyKey ?? "Empty",
    }));
  for (const name of rule.serialized ?? []) {
    if (!messageTypeOf(fieldNamed(name)))
      throw new Error(`${typeName}.${name}: only a message field is serialized`);
  }
  const flatten = rule.oneof?.flatten === true;
  if (flatten && oneofs.length !== 1) throw new Error(`${typeName}: only a message with one oneof flattens`);
  return {
    typeName,
    type,
    ...(rule.wellKnown ? { wellKnown: rule.wellKnown } : {}),
    plain: type.fieldsArray.filter((f) => !isRealOneof(f) && !damlNames.has(f.name)),
    oneofs,
    flatten,
    daml,
    serialized: new Set(rule.serialized ?? []),
  };
}

/**
 * What an absent field of a message the ledger sent becomes in JSON. Canton prints every
 * `Option` that is `None` as `null` (circe, nulls kept), so a field with presence (a message,
 * a proto3 `optional` scalar) and a Daml field (create arguments, key, view, choice result)
 * are `null` when absent; scalars without presence, lists and maps take their defaults.
 */
export function writesNullWhenAbsent(field: protobuf.Field): boolean {
  if (field.repeated || field.map) return false;
  return messageTypeOf(field) !== undefined || (field.partOf != null && isSyntheticOneof(field.partOf));
}

export function typeNameOf(reflection: protobuf.ReflectionObject): string {
  return reflection.fullName.replace(/^\./, "");
}

/** The message type of a field, or undefined for scalars and enums. */
export function messageTypeOf(field: protobuf.Field): protobuf.Type | undefined {
  const resolved = field.resolvedType;
  return resolved && "fieldsArray" in resolved ? (resolved as protobuf.Type) : undefined;
}

export function enumTypeOf(field: protobuf.Field): protobuf.Enum | undefined {
  const resolved = field.resolvedType;
  return resolved && "valuesById" in resolved ? (resolved as protobuf.Enum) : undefined;
}

function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  // proto3 `optional` makes a one-field oneof named `_<field>`; it is not a JSON oneof.
  return oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0]?.name}`;
}

function isRealOneof(field: protobuf.Field): boolean {
  return field.partOf !== null && field.partOf !== undefined && !isSyntheticOneof(field.partOf);
}
