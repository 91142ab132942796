import type protobuf from "protobufjs";
import {
  type ConstructorShape,
  formatDate,
  formatTimestamp,
  JsonShapeCompiler,
  type JsonShapeTarget,
  type OptionalForm,
  type RecordFieldShape,
  type SignatureResolver,
} from "../../lf/index.js";
import { shortVarint } from "./protobuf-scalars.js";
import {
  ascii,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  EMPTY_ARRAY,
  EMPTY_OBJECT,
  FALSE,
  NULL,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  type TextWriter,
  TRUE,
} from "./text-writer.js";

/**
 * Daml values from their Ledger API wire bytes straight to the JSON text the object path
 * (decode + toObject + ValueCodec.toJson + JSON.stringify) writes: the JSON shapes that
 * src/lf/json-shape-compiler.ts decides per closed LF type, read from bytes. Records by
 * position (labels ignored, trailing null members left out, fields the ledger left out are
 * None), variants {tag, value}, enums as strings, Int64 and Numeric as strings, Timestamp
 * and Date as ISO text, TextMap as an object, GenMap as [key, value] pairs.
 *
 * Only the well-formed case is written here. Anything else (a value that does not match its
 * type, a wire layout protobufjs would merge or reorder, a TextMap whose JSON object would
 * reorder or merge keys) throws OFF_PATH, and the caller writes that value through the
 * object path, which gives the same output or the same error: the two paths cannot diverge
 * on unusual input because only one of them handles it.
 */

type Reader = protobuf.Reader;

/** Reads one message in [r.pos, end) and writes its JSON; leaves r.pos at end. Throws OFF_PATH. */
export type WireWriter = (r: Reader, end: number, w: TextWriter) => void;

export interface WireType {
  /** A `Value` message of this type. */
  value: WireWriter;
  /** A `Record` message (createArguments, viewValue), when the type is a record. */
  record?: WireWriter;
  /** The JSON of None when the type is an Optional (a record field the ledger left out). */
  none?: Uint8Array;
}

/** The signal that a value leaves the fast path; an object (no stack trace to capture). */
export const OFF_PATH: { readonly reason: string } = Object.freeze({
  reason: "value not on the wire fast path",
});

// Value.sum cases as tags (field number << 3 | wire type).
const UNIT = 0x0a;
const BOOL = 0x10;
const INT64 = 0x18;
const DATE = 0x20;
const TIMESTAMP = 0x29;
const NUMERIC = 0x32;
const PARTY = 0x3a;
const TEXT = 0x42;
const CONTRACT_ID = 0x4a;
const OPTIONAL = 0x52;
const LIST = 0x5a;
const TEXT_MAP = 0x62;
const GEN_MAP = 0x6a;
const RECORD = 0x72;
const VARIANT = 0x7a;
/** Field 16: a two-byte varint tag (0x82 0x01). */
const ENUM = (16 << 3) | 2;
/** Field 1 / field 2 / field 3 of a submessage, length-delimited. */
const F1 = 0x0a;
const F2 = 0x12;
const F3 = 0x1a;

const LETTER_N = 0x6e;

/** A type the object path has no JSON for: always off the fast path (the object path throws). */
const UNSUPPORTED: WireType = { value: offPath, record: offPath };

function offPath(): never {
  throw OFF_PATH;
}

/** Reads the case tag of a Value and checks it is `tag`. */
function expectCase(r: Reader, end: number, tag: number): void {
  if (r.pos >= end || r.uint32() !== tag) offPath();
}

/** A length prefix at r.pos -> the end of what it delimits, inside `end`. */
function delimited(r: Reader, end: number): number {
  const length = r.uint32();
  const inner = r.pos + length;
  if (inner > end) offPath();
  return inner;
}

/** A Value whose case is a length-delimited message written by `body` (which ends at its end). */
function messageCase(tag: number, body: WireWriter): WireWriter {
  return (r, end, w) => {
    expectCase(r, end, tag);
    body(r, delimited(r, end), w);
    // Another field after the case: protobufjs would keep both; the object path decides.
    if (r.pos !== end) offPath();
  };
}

function stringCase(tag: number): WireType {
  return {
    value: (r, end, w) => {
      expectCase(r, end, tag);
      w.wireString(r);
      if (r.pos !== end) offPath();
    },
  };
}

/** Timestamp micros (sfixed64) as the object path hands them to formatTimestamp. */
function readMicros(r: Reader): number | string {
  const low = r.fixed32();
  const high = r.sfixed32();
  const micros = high * 4294967296 + low;
  if (Number.isSafeInteger(micros)) return micros;
  return ((BigInt(high) << 32n) + BigInt(low)).toString();
}

/** Caches the text of the last date / timestamp: values of one stream share few of them. */
function lastText<K>(format: (key: K) => string): (key: K) => Uint8Array {
  let lastKey: K | undefined;
  let lastBytes = ascii('""');
  return (key) => {
    if (key !== lastKey) {
      lastBytes = ascii(`"${format(key)}"`);
      lastKey = key;
    }
    return lastBytes;
  };
}

/** Wire bytes -> JSON text for each JSON shape (the shapes are decided in src/lf). */
const wireValueTarget: JsonShapeTarget<WireType> = {
  unit: {
    value: (r, end, w) => {
      expectCase(r, end, UNIT);
      r.pos = delimited(r, end);
      if (r.pos !== end) offPath();
      w.bytes(EMPTY_OBJECT);
    },
  },
  bool: {
    value: (r, end, w) => {
      expectCase(r, end, BOOL);
      w.bytes(r.bool() ? TRUE : FALSE);
      if (r.pos !== end) offPath();
    },
  },
  int64: {
    value: (r, end, w) => {
      expectCase(r, end, INT64);
      w.byte(QUOTE);
      const zigzag = shortVarint(r);
      if (zigzag === undefined) w.raw(String(r.sint64()));
      else if (zigzag % 2 === 0) w.digits(zigzag / 2);
      else w.integer(-(zigzag + 1) / 2);
      w.byte(QUOTE);
      if (r.pos !== end) offPath();
    },
  },
  text: stringCase(TEXT),
  party: stringCase(PARTY),
  contractId: stringCase(CONTRACT_ID),
  date: (() => {
    const text = lastText(formatDate);
    return {
      value: (r, end, w) => {
        expectCase(r, end, DATE);
        w.bytes(text(r.int32()));
        if (r.pos !== end) offPath();
      },
    };
  })(),
  timestamp: (() => {
    const text = lastText(formatTimestamp);
    return {
      value: (r, end, w) => {
        expectCase(r, end, TIMESTAMP);
        w.bytes(text(readMicros(r)));
        if (r.pos !== end) offPath();
      },
    };
  })(),
  numeric: () => stringCase(NUMERIC),
  optional,
  list,
  textMap,
  genMap,
  record: (_name, fields) => {
    const record = recordWriter(fields);
    return { record, value: messageCase(RECORD, record) };
  },
  variant: (_name, constructors) => variantType(constructors),
  enumeration: (_name, constructors) => enumType(constructors),
  unsupported: () => UNSUPPORTED,
  // Recursive types refer to themselves: writers call through this object, filled in after.
  placeholder: () => ({ value: offPath }),
  fill: (placeholder, body) => {
    Object.assign(placeholder, body);
  },
};

/** The wire writers of closed LF types, cached per type. */
export class WireValueCompiler extends JsonShapeCompiler<WireType> {
  constructor(resolver: Pick<SignatureResolver, "resolveDataType">) {
    super(resolver, wireValueTarget);
  }
}

function optional(inner: WireType, form: OptionalForm): WireType {
  const wrapped = form !== "alone";
  const none = wrapped ? EMPTY_ARRAY : NULL;
  return {
    none,
    value: messageCase(OPTIONAL, (r, end, w) => {
      if (r.pos === end) {
        w.bytes(none);
        return;
      }
      if (r.uint32() !== F1) offPath();
      const valueEnd = delimited(r, end);
      if (wrapped) w.byte(OPEN_BRACKET);
      inner.value(r, valueEnd, w);
      if (wrapped) w.byte(CLOSE_BRACKET);
      if (r.pos !== end) offPath();
    }),
  };
}

function list(inner: WireType): WireType {
  return {
    value: messageCase(LIST, (r, end, w) => {
      w.byte(OPEN_BRACKET);
      let first = true;
      while (r.pos < end) {
        if (r.uint32() !== F1) offPath();
        if (first) first = false;
        else w.byte(COMMA);
        inner.value(r, delimited(r, end), w);
      }
      w.byte(CLOSE_BRACKET);
    }),
  };
}

/**
 * A JSON object keeps its first position for a repeated key and puts integer-like keys
 * first: maps with such keys go to the object path, which builds that object.
 */
function textMap(inner: WireType): WireType {
  return {
    value: messageCase(TEXT_MAP, (r, end, w) => {
      w.byte(OPEN_BRACE);
      // Keys are checked for repeats from the second entry on (most maps are small).
      let firstKey: string | undefined;
      let seen: Set<string> | undefined;
      while (r.pos < end) {
        const entry = nextEntry(r, end);
        const entryEnd = entry.end;
        const valueAt = entry.value;
        r.pos = entry.key;
        const key = r.string();
        const lead = key.charCodeAt(0);
        if (lead >= 0x30 && lead <= 0x39) offPath();
        if (firstKey === undefined) firstKey = key;
        else {
          seen ??= new Set([firstKey]);
          if (seen.has(key)) offPath();
          seen.add(key);
          w.byte(COMMA);
        }
        w.string(key);
        w.byte(COLON);
        r.pos = valueAt;
        inner.value(r, delimited(r, entryEnd), w);
        r.pos = entryEnd;
      }
      w.byte(CLOSE_BRACE);
    }),
  };
}

function genMap(keys: WireType, values: WireType): WireType {
  return {
    value: messageCase(GEN_MAP, (r, end, w) => {
      w.byte(OPEN_BRACKET);
      let first = true;
      while (r.pos < end) {
        const entry = nextEntry(r, end);
        const entryEnd = entry.end;
        const valueAt = entry.value;
        if (first) first = false;
        else w.byte(COMMA);
        w.byte(OPEN_BRACKET);
        r.pos = entry.key;
        keys.value(r, delimited(r, entryEnd), w);
        w.byte(COMMA);
        r.pos = valueAt;
        values.value(r, delimited(r, entryEnd), w);
        w.byte(CLOSE_BRACKET);
        r.pos = entryEnd;
      }
      w.byte(CLOSE_BRACKET);
    }),
  };
}

/** Where a map entry ends and where its key (field 1) and value (field 2) start (their length prefix). */
const ENTRY = { end: -1, key: -1, value: -1 };

/** The map entry {key = 1, value = 2} at r.pos of a TextMap / GenMap message ending at `end`. */
function nextEntry(r: Reader, end: number): typeof ENTRY {
  if (r.uint32() !== F1) offPath();
  const entryEnd = delimited(r, end);
  ENTRY.end = entryEnd;
  ENTRY.key = -1;
  ENTRY.value = -1;
  while (r.pos < entryEnd) {
    const tag = r.uint32();
    // protobufjs keeps the last of a repeated field; the object path handles that.
    if (tag === F1 && ENTRY.key < 0) ENTRY.key = r.pos;
    else if (tag === F2 && ENTRY.value < 0) ENTRY.value = r.pos;
    else offPath();
    r.pos = delimited(r, entryEnd);
  }
  if (ENTRY.key < 0 || ENTRY.value < 0) offPath();
  return ENTRY;
}

interface RecordMember {
  /** `"name":`, with the comma before it for all but the first. */
  readonly key: Uint8Array;
  readonly type: WireType;
}

/**
 * A Record message: fields by position; members whose JSON is null after the last other
 * one are left out (they are written, then cut off); fields the ledger left out are None.
 */
function recordWriter(fields: readonly RecordFieldShape<WireType>[]): WireWriter {
  const members: RecordMember[] = fields.map((f, i) => ({
    key: ascii(`${i === 0 ? "" : ","}${JSON.stringify(f.name)}:`),
    type: f.codec,
  }));
  const n = members.length;
  return (r, end, w) => {
    w.byte(OPEN_BRACE);
    let kept = w.pos;
    let i = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag !== F2) {
        // record_id: verbose output only, not needed (fields are typed by position).
        if (tag !== F1) offPath();
        r.pos = delimited(r, end);
        continue;
      }
      const fieldEnd = delimited(r, end);
      if (i < n) {
        const member = members[i] as RecordMember;
        w.bytes(member.key);
        const at = w.pos;
        recordFieldValue(r, fieldEnd, w, member.type);
        if (w.byteAt(at) !== LETTER_N) kept = w.pos;
      } else if (!isNoneField(r, fieldEnd)) offPath();
      r.pos = fieldEnd;
      i++;
    }
    for (; i < n; i++) {
      const member = members[i] as RecordMember;
      const none = member.type.none;
      if (none === undefined) offPath();
      w.bytes(member.key);
      w.bytes(none);
      if (none !== NULL) kept = w.pos;
    }
    w.pos = kept;
    w.byte(CLOSE_BRACE);
  };
}

/** A RecordField {label = 1, value = 2}: the value written, the label skipped. */
function recordFieldValue(r: Reader, end: number, w: TextWriter, type: WireType): void {
  let written = false;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === F2 && !written) {
      type.value(r, delimited(r, end), w);
      written = true;
    } else if (tag === F1) r.pos = delimited(r, end);
    else offPath();
  }
  if (!written) offPath();
}

/** Whether a RecordField past the signature's fields holds exactly None. */
function isNoneField(r: Reader, end: number): boolean {
  let none = false;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === F1) r.pos = delimited(r, end);
    else if (tag === F2 && !none) {
      const valueEnd = delimited(r, end);
      // Value{optional: Optional{}}: the case tag and a zero length.
      if (valueEnd - r.pos !== 2 || r.uint32() !== OPTIONAL || r.uint32() !== 0) return false;
      none = true;
    } else return false;
  }
  return none;
}

/** Finds which of `names` the UTF-8 bytes [start, end) spell, -1 if none. */
function constructorIndex(buf: Uint8Array, start: number, end: number, names: readonly Uint8Array[]): number {
  const length = end - start;
  for (let c = 0; c < names.length; c++) {
    const name = names[c] as Uint8Array;
    if (name.length !== length) continue;
    let i = 0;
    while (i < length && buf[start + i] === name[i]) i++;
    if (i === length) return c;
  }
  return -1;
}

/** Variant {variant_id = 1, constructor = 2, value = 3} / Enum {enum_id = 1, constructor = 2}. */
const CONSTRUCTOR = { start: -1, end: -1, value: -1 };
function readConstructor(r: Reader, end: number): typeof CONSTRUCTOR {
  CONSTRUCTOR.start = -1;
  CONSTRUCTOR.value = -1;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === F2 && CONSTRUCTOR.start < 0) {
      const stringEnd = delimited(r, end);
      CONSTRUCTOR.start = r.pos;
      CONSTRUCTOR.end = stringEnd;
      r.pos = stringEnd;
    } else if (tag === F3 && CONSTRUCTOR.value < 0) {
      CONSTRUCTOR.value = r.pos;
      r.pos = delimited(r, end);
    } else if (tag === F1) r.pos = delimited(r, end);
    else offPath();
  }
  if (CONSTRUCTOR.start < 0) offPath();
  return CONSTRUCTOR;
}

function variantType(constructors: readonly ConstructorShape<WireType>[]): WireType {
  const names = constructors.map((c) => ascii(c.name));
  const opens = constructors.map((c) => ascii(`{"tag":${JSON.stringify(c.name)},"value":`));
  return {
    value: messageCase(VARIANT, (r, end, w) => {
      const found = readConstructor(r, end);
      const c = constructorIndex(r.buf, found.start, found.end, names);
      const valueAt = found.value;
      if (c < 0 || valueAt < 0) offPath();
      w.bytes(opens[c] as Uint8Array);
      r.pos = valueAt;
      (constructors[c] as ConstructorShape<WireType>).codec.value(r, delimited(r, end), w);
      w.byte(CLOSE_BRACE);
      r.pos = end;
    }),
  };
}

function enumType(constructors: readonly string[]): WireType {
  const names = constructors.map((c) => ascii(c));
  const texts = constructors.map((c) => ascii(JSON.stringify(c)));
  return {
    value: (r, end, w) => {
      expectCase(r, end, ENUM);
      const enumEnd = delimited(r, end);
      const found = readConstructor(r, enumEnd);
      const c = constructorIndex(r.buf, found.start, found.end, names);
      if (c < 0 || found.value >= 0) offPath();
      w.bytes(texts[c] as Uint8Array);
      if (r.pos !== end) offPath();
    },
  };
}
