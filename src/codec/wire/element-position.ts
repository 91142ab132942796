import type protobuf from "protobufjs";

/**
 * The offset of a stream element, read from its protobuf bytes: the `offset` field of the
 * message its response's oneof carries (GetUpdatesResponse's Transaction, Reassignment,
 * OffsetCheckpoint and TopologyTransaction; CompletionStreamResponse's Completion and
 * OffsetCheckpoint). The fan-out needs each shared element's offset, and each element of a
 * member's own call: read from the JSON text it costs a `JSON.parse` of the whole element (some
 * 5-10 µs for a 1.3 KB transaction), from the bytes a walk over the tags of two messages, the
 * large fields (events) skipped by their length.
 */
export type OffsetReader = (bytes: Uint8Array) => number | undefined;

/** Wire types of protobuf: a varint, 64 bits, length-delimited, 32 bits. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/**
 * The reader of `type`'s elements, when it is a response whose one oneof carries messages with an
 * int64 `offset` field; undefined for any other type (its elements' offsets are read from their
 * text).
 */
export function offsetReader(type: protobuf.Type): OffsetReader | undefined {
  const [oneof, ...others] = type.oneofsArray;
  if (oneof === undefined || others.length > 0) return undefined;
  // By the oneof's field number: the number of that message's offset field.
  const offsetFields = new Map<number, number>();
  for (const field of oneof.fieldsArray) {
    field.resolve();
    const message = field.resolvedType;
    const offset = message && "fieldsById" in message ? message.fields.offset : undefined;
    if (offset === undefined || offset.type !== "int64" || offset.repeated) return undefined;
    offsetFields.set(field.id, offset.id);
  }
  return (bytes) => readOffset(bytes, offsetFields);
}

function readOffset(bytes: Uint8Array, offsetFields: ReadonlyMap<number, number>): number | undefined {
  const cursor = { pos: 0 };
  const end = bytes.length;
  while (cursor.pos < end) {
    const tag = varint(bytes, cursor);
    const offsetField = offsetFields.get(tag >>> 3);
    if (offsetField === undefined || (tag & 7) !== LENGTH_DELIMITED) {
      skip(bytes, cursor, tag & 7);
      continue;
    }
    const length = varint(bytes, cursor);
    return fieldInMessage(bytes, cursor, cursor.pos + length, offsetField);
  }
  return undefined;
}

/** The varint of field `id` in the message [cursor.pos, end), 0 when absent (proto3's default). */
function fieldInMessage(bytes: Uint8Array, cursor: { pos: number }, end: number, id: number): number {
  let value = 0;
  while (cursor.pos < end) {
    const tag = varint(bytes, cursor);
    // The last occurrence wins, as protobuf merges a scalar field seen twice.
    if (tag >>> 3 === id && (tag & 7) === VARINT) value = varint(bytes, cursor);
    else skip(bytes, cursor, tag & 7);
  }
  return value;
}

/**
 * A varint as a number: exact up to 2^53, which the ledger's offsets stay below (the JSON API
 * writes them as JSON numbers too).
 */
function varint(bytes: Uint8Array, cursor: { pos: number }): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (cursor.pos >= bytes.length) throw new RangeError("truncated varint");
    const byte = bytes[cursor.pos++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
}

function skip(bytes: Uint8Array, cursor: { pos: number }, wireType: number): void {
  switch (wireType) {
    case VARINT:
      varint(bytes, cursor);
      return;
    case FIXED64:
      cursor.pos += 8;
      return;
    case LENGTH_DELIMITED: {
      // Read before adding: `pos += varint(...)` would add to the position before the length.
      const length = varint(bytes, cursor);
      cursor.pos += length;
      return;
    }
    case FIXED32:
      cursor.pos += 4;
      return;
    default:
      throw new RangeError(`wire type ${wireType}`);
  }
}

/**
 * The element transcoded last and its bytes, so that its offset is read from them when asked
 * (the fan-out asks for each element while the transcoder's caller hands it on, synchronously).
 * The text is the key: an element asked for later, or one whose text was reshaped, misses and
 * is read from its text; an equal text has the same offset. The bytes are held until the next
 * element: a view into the chunk gRPC read, which nothing writes again.
 */
export class LastTranscoded {
  #text: string | undefined;
  #bytes: Uint8Array | undefined;
  #reader: OffsetReader | undefined;

  /** `text` was transcoded from `bytes`, whose offset `reader` reads (none: not an element with one). */
  set(text: string, bytes: Uint8Array, reader: OffsetReader | undefined): void {
    this.#text = text;
    this.#bytes = bytes;
    this.#reader = reader;
  }

  /** The offset of `text` when it is the element transcoded last; undefined otherwise. */
  offsetOf(text: string): number | undefined {
    if (text !== this.#text || this.#reader === undefined) return undefined;
    try {
      return this.#reader(this.#bytes as Uint8Array);
    } catch {
      // Bytes the transcoder read: never seen; the text is read instead.
      return undefined;
    }
  }
}
