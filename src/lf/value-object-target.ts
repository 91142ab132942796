/**
 * The JSON shapes of json-shape-compiler.ts as a pair of converters (JSON -> Value, Value ->
 * JSON) over the objects @grpc/proto-loader uses. Everything that depends only on the type
 * (field tables, constructor maps, nested converters) is worked out when the shape is
 * compiled, so converting a value is a straight walk with no signature lookups.
 *
 * Input follows Canton's JSON API v2 (transcode JsonCodec): unknown record fields are errors
 * unless null, a left-out Optional field is None. Records coming from the ledger are read by
 * position, never by label.
 */
import type {
  ConstructorShape,
  JsonShapeTarget,
  OptionalForm,
  RecordFieldShape,
} from "./json-shape-compiler.js";
import {
  formatDate,
  formatTimestamp,
  parseDate,
  parseInt64,
  parseNumeric,
  parseTimestamp,
} from "./scalar-formats.js";
import { describeJson, describeValue, faultAt, keySegment, rethrowUnder, ValueFault } from "./value-fault.js";
import type {
  JsonValue,
  LedgerMapEntry,
  LedgerRecordField,
  LedgerValue,
  LedgerValueView,
} from "./value-shapes.js";

export interface CompiledType {
  /** Throws ValueFault. */
  toValue: (json: unknown) => LedgerValue;
  /** Throws ValueFault. */
  toJson: (value: LedgerValue) => JsonValue;
}

type View = LedgerValueView;
const view = (v: LedgerValue | null | undefined): View => (v ?? {}) as View;

const NONE: LedgerValue = { optional: { value: null } };
const isNone = (v: LedgerValue | null | undefined): boolean => {
  const o = view(v).optional;
  return o != null && o.value == null;
};

function isPlainObject(json: unknown): json is Record<string, unknown> {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}

function mismatch(expected: string, value: unknown): ValueFault {
  return new ValueFault(
    `ledger value does not match the signature: expected ${expected}, got ${describeValue(value)}`,
  );
}

/** Sets a key even when it is `__proto__` (a legal Daml field name and TextMap key). */
function setProp(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** JSON.parse output has no inherited keys, but `obj.toString` would still find one. */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));
function ownValue(obj: Record<string, unknown>, key: string, inherited: boolean): unknown {
  if (inherited && !Object.hasOwn(obj, key)) return undefined;
  return obj[key];
}

function unsupported(description: string): CompiledType {
  const fail = (): never => {
    throw new ValueFault(`${description} has no JSON encoding`);
  };
  return { toValue: fail, toJson: fail };
}

// ------------------------------------------------------------------ scalars

function scalar(
  toValue: (json: unknown) => LedgerValue,
  toJson: (v: View, original: LedgerValue) => JsonValue,
): CompiledType {
  return { toValue, toJson: (value) => toJson(view(value), value) };
}

function stringCodec(
  label: string,
  wrap: (s: string) => LedgerValue,
  read: (v: View) => unknown,
): CompiledType {
  return scalar(
    (json) => {
      if (typeof json !== "string") throw new ValueFault(`expected ${label}, got ${describeJson(json)}`);
      return wrap(json);
    },
    (v, original) => {
      const s = read(v);
      if (typeof s !== "string") throw mismatch(label, original);
      return s;
    },
  );
}

const UNIT = scalar(
  (json) => {
    if (!isPlainObject(json) || Object.keys(json).length > 0) {
      throw new ValueFault(`expected Unit ({}), got ${describeJson(json)}`);
    }
    return { unit: {} };
  },
  (v, original) => {
    if (v.unit == null) throw mismatch("Unit", original);
    return {};
  },
);

const BOOL = scalar(
  (json) => {
    if (typeof json !== "boolean") throw new ValueFault(`expected Bool, got ${describeJson(json)}`);
    return { bool: json };
  },
  (v, original) => {
    if (typeof v.bool !== "boolean") throw mismatch("Bool", original);
    return v.bool;
  },
);

const INT64 = scalar(
  (json) => ({ int64: parseInt64(json) }),
  (v, original) => {
    const n = v.int64;
    if (typeof n === "string") return n;
    if (typeof n === "number") return String(n);
    throw mismatch("Int64", original);
  },
);

const TEXT = stringCodec(
  "Text",
  (text) => ({ text }),
  (v) => v.text,
);
const PARTY = stringCodec(
  "Party",
  (party) => ({ party }),
  (v) => v.party,
);
const CONTRACT_ID = stringCodec(
  "ContractId",
  (contractId) => ({ contractId }),
  (v) => v.contractId,
);

const DATE = scalar(
  (json) => ({ date: parseDate(json) }),
  (v, original) => {
    if (typeof v.date !== "number") throw mismatch("Date", original);
    return formatDate(v.date);
  },
);

const TIMESTAMP = scalar(
  (json) => ({ timestamp: parseTimestamp(json) }),
  (v, original) => {
    const t = v.timestamp;
    if (typeof t !== "string" && typeof t !== "number") throw mismatch("Timestamp", original);
    return formatTimestamp(t);
  },
);

function numericCodec(scale: number): CompiledType {
  return scalar(
    (json) => ({ numeric: parseNumeric(json, scale) }),
    // Passed through as the ledger wrote it, as Canton's JSON API does (it prints the full scale).
    (v, original) => {
      if (typeof v.numeric !== "string") throw mismatch("Numeric", original);
      return v.numeric;
    },
  );
}

// ------------------------------------------------------------------ the target

/** JSON <-> Value objects for each JSON shape (the shapes are decided in json-shape-compiler.ts). */
export const valueObjectTarget: JsonShapeTarget<CompiledType> = {
  unit: UNIT,
  bool: BOOL,
  int64: INT64,
  text: TEXT,
  party: PARTY,
  contractId: CONTRACT_ID,
  date: DATE,
  timestamp: TIMESTAMP,
  numeric: numericCodec,
  optional,
  list,
  textMap,
  genMap,
  record,
  variant,
  enumeration,
  unsupported,
  placeholder: (key) => {
    const early = (): never => {
      throw new Error(`internal: codec for ${key} used before it was compiled`);
    };
    return { toValue: early, toJson: early };
  },
  fill: (placeholder, body) => {
    placeholder.toValue = body.toValue;
    placeholder.toJson = body.toJson;
  },
};

// ---------------------------------------------------------------- containers

function optional(inner: CompiledType, form: OptionalForm): CompiledType {
  if (form === "alone") {
    return {
      toValue: (json) => (json == null ? NONE : { optional: { value: inner.toValue(json) } }),
      toJson: (value) => {
        const o = view(value).optional;
        if (o == null) throw mismatch("Optional", value);
        return o.value == null ? null : inner.toJson(o.value);
      },
    };
  }
  return {
    toValue: (json) => {
      // null for the outermost level only: that is how a left-out record field arrives.
      if (json == null && form === "outer") return NONE;
      if (!Array.isArray(json) || json.length > 1) {
        throw new ValueFault(
          `expected nested Optional ([] for None, [x] for Some x), got ${describeJson(json)}`,
        );
      }
      if (json.length === 0) return NONE;
      try {
        return { optional: { value: inner.toValue(json[0]) } };
      } catch (e) {
        return rethrowUnder(e, "[0]");
      }
    },
    toJson: (value) => {
      const o = view(value).optional;
      if (o == null) throw mismatch("Optional", value);
      return o.value == null ? [] : [inner.toJson(o.value)];
    },
  };
}

function list(inner: CompiledType): CompiledType {
  return {
    toValue: (json) => {
      if (!Array.isArray(json)) throw new ValueFault(`expected List (an array), got ${describeJson(json)}`);
      const elements = new Array<LedgerValue>(json.length);
      for (let i = 0; i < json.length; i++) {
        try {
          elements[i] = inner.toValue(json[i]);
        } catch (e) {
          rethrowUnder(e, `[${i}]`);
        }
      }
      return { list: { elements } };
    },
    toJson: (value) => {
      const l = view(value).list;
      if (l == null) throw mismatch("List", value);
      const elements = l.elements ?? [];
      const out = new Array<JsonValue>(elements.length);
      for (let i = 0; i < elements.length; i++) {
        try {
          out[i] = inner.toJson(elements[i] as LedgerValue);
        } catch (e) {
          rethrowUnder(e, `[${i}]`);
        }
      }
      return out;
    },
  };
}

function textMap(inner: CompiledType): CompiledType {
  return {
    toValue: (json) => {
      if (!isPlainObject(json))
        throw new ValueFault(`expected TextMap (an object), got ${describeJson(json)}`);
      const entries: LedgerMapEntry<string>[] = [];
      for (const key of Object.keys(json)) {
        try {
          entries.push({ key, value: inner.toValue(json[key]) });
        } catch (e) {
          rethrowUnder(e, keySegment(key));
        }
      }
      return { textMap: { entries } };
    },
    toJson: (value) => {
      const m = view(value).textMap;
      if (m == null) throw mismatch("TextMap", value);
      const out: Record<string, JsonValue> = {};
      for (const entry of m.entries ?? []) {
        try {
          setProp(out, entry.key, inner.toJson(entry.value as LedgerValue));
        } catch (e) {
          rethrowUnder(e, keySegment(entry.key));
        }
      }
      return out;
    },
  };
}

function genMap(keys: CompiledType, values: CompiledType): CompiledType {
  return {
    toValue: (json) => {
      if (!Array.isArray(json)) {
        throw new ValueFault(`expected GenMap (an array of [key, value] pairs), got ${describeJson(json)}`);
      }
      const entries = new Array<LedgerMapEntry<LedgerValue>>(json.length);
      for (let i = 0; i < json.length; i++) {
        const pair: unknown = json[i];
        if (!Array.isArray(pair) || pair.length !== 2) {
          throw faultAt(`expected a [key, value] pair, got ${describeJson(pair)}`, `[${i}]`);
        }
        let key: LedgerValue;
        try {
          key = keys.toValue(pair[0]);
        } catch (e) {
          rethrowUnder(e, `[${i}][0]`);
        }
        try {
          entries[i] = { key, value: values.toValue(pair[1]) };
        } catch (e) {
          rethrowUnder(e, `[${i}][1]`);
        }
      }
      return { genMap: { entries } };
    },
    toJson: (value) => {
      const m = view(value).genMap;
      if (m == null) throw mismatch("GenMap", value);
      const entries = m.entries ?? [];
      const out = new Array<JsonValue>(entries.length);
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i] as LedgerMapEntry<LedgerValue | null>;
        try {
          out[i] = [keys.toJson(entry.key as LedgerValue), values.toJson(entry.value as LedgerValue)];
        } catch (e) {
          rethrowUnder(e, `[${i}]`);
        }
      }
      return out;
    },
  };
}

// ---------------------------------------------------------------- user-defined types

function record(name: string, fieldList: readonly RecordFieldShape<CompiledType>[]): CompiledType {
  const fields = fieldList.map((f) => ({
    ...f,
    segment: keySegment(f.name),
    inherited: INHERITED.has(f.name),
  }));
  const n = fields.length;
  const names = new Set(fields.map((f) => f.name));
  return {
    toValue: (json) => {
      if (!isPlainObject(json))
        throw new ValueFault(`expected record ${name} (an object), got ${describeJson(json)}`);
      const out = new Array<LedgerRecordField>(n);
      let seen = 0;
      for (let i = 0; i < n; i++) {
        const f = fields[i] as (typeof fields)[number];
        const raw = ownValue(json, f.name, f.inherited);
        if (raw === undefined) {
          if (!f.optional) {
            throw faultAt(`missing required field of record ${name}`, f.segment);
          }
          out[i] = { label: f.name, value: NONE };
          continue;
        }
        seen++;
        try {
          out[i] = { label: f.name, value: f.codec.toValue(raw) };
        } catch (e) {
          rethrowUnder(e, f.segment);
        }
      }
      let keyCount = 0;
      for (const _ in json) keyCount++;
      if (keyCount !== seen) {
        for (const key of Object.keys(json)) {
          if (!names.has(key) && json[key] !== null) {
            throw faultAt(`unknown field (record ${name} has no such field)`, keySegment(key));
          }
        }
      }
      // Trailing Nones are left out, as Canton does, so that a record written against a newer
      // package version still fits an older one (upgrading only appends Optional fields).
      let end = n;
      while (
        end > 0 &&
        (fields[end - 1] as (typeof fields)[number]).optional &&
        isNone((out[end - 1] as LedgerRecordField).value as LedgerValue)
      )
        end--;
      if (end < n) out.length = end;
      return { record: { recordId: null, fields: out } };
    },
    toJson: (value) => {
      const r = view(value).record;
      if (r == null) throw mismatch(`record ${name}`, value);
      const given = r.fields ?? [];
      for (let i = n; i < given.length; i++) {
        if (!isNone((given[i] as LedgerRecordField).value as LedgerValue)) {
          throw new ValueFault(`ledger record ${name} has ${given.length} fields, the signature only ${n}`);
        }
      }
      const values = new Array<JsonValue>(n);
      let last = -1;
      for (let i = 0; i < n; i++) {
        const f = fields[i] as (typeof fields)[number];
        // Fewer fields than the signature: the ledger left trailing Nones out.
        const fv = i < given.length ? (given[i] as LedgerRecordField).value : f.optional ? NONE : null;
        try {
          if (fv == null) throw mismatch(`field ${f.name}`, fv);
          const j = f.codec.toJson(fv);
          values[i] = j;
          if (j !== null) last = i;
        } catch (e) {
          rethrowUnder(e, f.segment);
        }
      }
      const out: Record<string, JsonValue> = {};
      for (let i = 0; i <= last; i++)
        setProp(out, (fields[i] as (typeof fields)[number]).name, values[i] as JsonValue);
      return out;
    },
  };
}

function variant(name: string, constructors: readonly ConstructorShape<CompiledType>[]): CompiledType {
  const byName = new Map(constructors.map((c) => [c.name, c]));
  const expected = constructors.map((c) => c.name).join(", ");
  return {
    toValue: (json) => {
      if (!isPlainObject(json) || typeof json.tag !== "string") {
        throw new ValueFault(
          `expected variant ${name} ({"tag": ..., "value": ...}), got ${describeJson(json)}`,
        );
      }
      const c = byName.get(json.tag);
      if (c === undefined) {
        throw faultAt(
          `unknown constructor ${describeJson(json.tag)} of variant ${name} (expected one of ${expected})`,
          ".tag",
        );
      }
      // A constructor without argument may leave `value` out.
      const raw = json.value === undefined && c.isUnit ? {} : json.value;
      try {
        return { variant: { variantId: null, constructor: c.name, value: c.codec.toValue(raw) } };
      } catch (e) {
        return rethrowUnder(e, ".value");
      }
    },
    toJson: (value) => {
      const v = view(value).variant;
      const c = v?.constructor === undefined ? undefined : byName.get(v.constructor);
      if (v == null || c === undefined) throw mismatch(`variant ${name} (${expected})`, value);
      try {
        return { tag: c.name, value: c.codec.toJson(v.value as LedgerValue) };
      } catch (e) {
        return rethrowUnder(e, ".value");
      }
    },
  };
}

function enumeration(name: string, constructors: readonly string[]): CompiledType {
  const known = new Set(constructors);
  const expected = constructors.join(", ");
  return {
    toValue: (json) => {
      if (typeof json !== "string" || !known.has(json)) {
        throw new ValueFault(`expected one of ${expected} (enum ${name}), got ${describeJson(json)}`);
      }
      return { enum: { enumId: null, constructor: json } };
    },
    toJson: (value) => {
      const c = view(value).enum?.constructor;
      if (c === undefined || !known.has(c)) throw mismatch(`enum ${name} (${expected})`, value);
      return c;
    },
  };
}
