import type protobuf from "protobufjs";
import type { TextWriter } from "./text-writer.js";

/**
 * Protobuf scalars read from the wire straight into JSON text, for the stream transcoder.
 * The JSON API writes every int64 outside Daml values as a JSON number; writing its exact
 * decimal keeps what `Number(decimalString)` of the object path would parse to.
 */

type Reader = protobuf.Reader;

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
export function writeVarint64(r: Reader, w: TextWriter, unsigned: boolean): void {
  const value = shortVarint(r);
  if (value !== undefined) w.integer(value);
  else w.raw(String((unsigned ? r.uint64() : r.int64()) as LongLike));
}

/** An int64 varint as a number (timestamp seconds). */
export function varint64Number(r: Reader): number {
  return shortVarint(r) ?? Number(String(r.int64() as LongLike));
}

/** Other 64-bit encodings (zigzag, fixed): rare in the Ledger API, so through Long. */
export function writeLong(w: TextWriter, value: LongLike): void {
  w.raw(String(value));
}

/** A double as JSON.stringify writes it (non-finite numbers become null). */
export function writeNumber(w: TextWriter, value: number): void {
  w.raw(Number.isFinite(value) ? `${value}` : "null");
}
