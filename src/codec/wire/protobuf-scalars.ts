import type protobuf from "protobufjs";
import { enumTypeOf, messageTypeOf } from "../rules/message-layout.js";
import { FALSE, type TextWriter, TRUE } from "./text-writer.js";

/**
 * Protobuf scalars read from the wire straight into JSON text, and the text of their
 * defaults, for the wire path.
 * The JSON API writes every int64 outside Daml values as a JSON number; writing its exact
 * decimal keeps what `Number(decimalString)` of the object path would parse to.
 */

type Reader = protobuf.Reader;
/** One value of a field at r.pos (length prefix included for length-delimited types). */
export type ValueWriter = (r: Reader, w: TextWriter) => void;

/** A Long (when protobufjs has long.js) or a number: both print their exact decimal. */
type LongLike = { toString(): string } | number;

/**
 * An int64/uint64 varint as a number when it has up to 7 bytes (49 bits, exact in a double,
 * no Long needed), else undefined with r.pos unchanged.
 */
export function shortVarint(r: Reader): number | undefined {
  const buf = r.buf;
  let pos = r.pos;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 7 && pos < r.len; i++) {
    const byte = buf[pos++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      r.pos = pos;
      return value;
    }
    scale *= 128;
  }
  return undefined;
}

/** An int64/uint64 varint as a JSON number; large or negative ones through protobufjs' Long. */
function writeVarint64(r: Reader, w: TextWriter, unsigned: boolean): void {
  const value = shortVarint(r);
  if (value !== undefined) w.integer(value);
  else w.raw(String((unsigned ? r.uint64() : r.int64()) as LongLike));
}

/** An int64 varint as a number (timestamp seconds). */
export function varint64Number(r: Reader): number {
  return shortVarint(r) ?? Number(String(r.int64() as LongLike));
}

/** Other 64-bit encodings (zigzag, fixed): rare in the Ledger API, so through Long. */
function writeLong(w: TextWriter, value: LongLike): void {
  w.raw(String(value));
}

/** A double as JSON.stringify writes it (non-finite numbers become null). */
function writeNumber(w: TextWriter, value: number): void {
  w.raw(Number.isFinite(value) ? `${value}` : "null");
}

/** Scalar types a repeated field may pack. */
export const PACKABLE = new Set([
  "double",
  "float",
  "int32",
  "uint32",
  "sint32",
  "fixed32",
  "sfixed32",
  "int64",
  "uint64",
  "sint64",
  "fixed64",
  "sfixed64",
  "bool",
]);

/** A map key as text (keys are few and short: read as strings, written through JSON.stringify). */
export function keyText(r: Reader, type: string): string {
  switch (type) {
    case "bool":
      return r.bool() ? "true" : "false";
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return String((r[type as "int64"]() as unknown as { toString(): string }) ?? "");
    default:
      return `${r[type as "int32"]()}`;
  }
}

export function scalarWriter(type: string): ValueWriter {
  switch (type) {
    case "string":
      return (r, w) => w.wireString(r);
    case "bytes":
      return (r, w) => w.wireBase64(r);
    case "bool":
      return (r, w) => w.bytes(r.bool() ? TRUE : FALSE);
    case "int32":
      return (r, w) => w.integer(r.int32());
    case "uint32":
      return (r, w) => w.integer(r.uint32());
    case "sint32":
      return (r, w) => w.integer(r.sint32());
    case "fixed32":
      return (r, w) => w.integer(r.fixed32());
    case "sfixed32":
      return (r, w) => w.integer(r.sfixed32());
    case "int64":
      return (r, w) => writeVarint64(r, w, false);
    case "uint64":
      return (r, w) => writeVarint64(r, w, true);
    case "sint64":
      return (r, w) => writeLong(w, r.sint64());
    case "fixed64":
      return (r, w) => writeLong(w, r.fixed64());
    case "sfixed64":
      return (r, w) => writeLong(w, r.sfixed64());
    case "double":
      return (r, w) => writeNumber(w, r.double());
    case "float":
      return (r, w) => writeNumber(w, r.float());
    default:
      throw new Error(`unsupported protobuf scalar type ${type}`);
  }
}

/** The text of a singular field's proto3 default, as proto-loader's `defaults: true` fills it in. */
export function scalarDefault(field: protobuf.Field): string | undefined {
  if (messageTypeOf(field)) return undefined;
  const enumType = enumTypeOf(field);
  if (enumType) {
    const name = enumType.valuesById[field.typeDefault as number];
    return JSON.stringify(name ?? field.typeDefault);
  }
  return scalarTypeDefault(field.type);
}

export function scalarTypeDefault(type: string): string {
  if (type === "string" || type === "bytes") return '""';
  if (type === "bool") return "false";
  return "0";
}
