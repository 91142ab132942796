import type protobuf from "protobufjs";

/**
 * JSON text written as UTF-8 bytes into one reusable buffer, turned into a string once per
 * element. Building the text from many small JS strings made the stream transcoder a
 * garbage factory (every concatenation is an object); bytes copied from the wire into one
 * buffer leave nothing behind but the final string.
 */

type Reader = protobuf.Reader;
/** protobufjs' BufferReader keeps the Buffer it reads. */
type ByteSource = Buffer;

const BACKSLASH = 0x5c;
const MINUS = 0x2d;

/** JSON punctuation and literals as the transcoders write them. */
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

export class TextWriter {
  private buf: Buffer = Buffer.allocUnsafe(64 * 1024);
  pos = 0;

  /** The text written since `reset()`, as a string. */
  text(): string {
    return this.buf.toString("utf8", 0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }

  /** One ASCII byte (structural characters). */
  byte(code: number): void {
    if (this.pos >= this.buf.length) this.grow(1);
    this.buf[this.pos++] = code;
  }

  /** Precomputed bytes (keys, wrappers). */
  bytes(bytes: Uint8Array): void {
    const length = bytes.length;
    if (this.pos + length > this.buf.length) this.grow(length);
    const buf = this.buf;
    let pos = this.pos;
    // A loop beats a native set() for the few bytes of a key.
    for (let i = 0; i < length; i++) buf[pos++] = bytes[i] as number;
    this.pos = pos;
  }

  /** Any JS string already in JSON form (a number, a stringified value). */
  raw(text: string): void {
    const max = text.length * 3;
    if (this.pos + max > this.buf.length) this.grow(max);
    this.pos += this.buf.write(text, this.pos, "utf8");
  }

  /** A JS string as a JSON string. */
  string(text: string): void {
    this.raw(JSON.stringify(text));
  }

  /** A safe integer (int32 family, int64 up to 2^53). */
  integer(value: number): void {
    if (value < 0) {
      this.byte(MINUS);
      this.digits(-value);
    } else this.digits(value);
  }

  /** A non-negative safe integer's decimal digits, written without making a string. */
  digits(value: number): void {
    if (value < 10) {
      this.byte(0x30 + value);
      return;
    }
    let count = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) count++;
    if (this.pos + count > this.buf.length) this.grow(count);
    const buf = this.buf;
    let pos = this.pos + count;
    this.pos = pos;
    let rest = value;
    while (rest > 0) {
      const next = Math.floor(rest / 10);
      buf[--pos] = 0x30 + (rest - next * 10);
      rest = next;
    }
  }

  /** A non-negative integer below 10^width as exactly `width` digits (leading zeros). */
  padded(value: number, width: number): void {
    if (this.pos + width > this.buf.length) this.grow(width);
    const buf = this.buf;
    let pos = this.pos + width;
    this.pos = pos;
    let rest = value;
    for (let i = 0; i < width; i++) {
      const next = Math.floor(rest / 10);
      buf[--pos] = 0x30 + (rest - next * 10);
      rest = next;
    }
  }

  /** The byte written at `pos` (< this.pos): lets a caller look at what a nested writer wrote. */
  byteAt(pos: number): number {
    return this.buf[pos] as number;
  }

  /**
   * A protobuf string field (length-delimited UTF-8 at r.pos) as a JSON string: its bytes are
   * copied as they are unless they need escaping (quote, backslash, control characters), in
   * which case JSON.stringify writes it. Non-ASCII bytes need no escaping in JSON text.
   */
  wireString(r: Reader): void {
    const length = r.uint32();
    const start = r.pos;
    const end = start + length;
    if (end > r.len) throw new RangeError(`index out of range: ${end} > ${r.len}`);
    r.pos = end;
    this.stringBytes(r.buf as ByteSource, start, end);
  }

  /** Bytes [start, end) of a UTF-8 string as a JSON string. */
  stringBytes(source: ByteSource, start: number, end: number): void {
    const need = end - start + 2;
    if (this.pos + need > this.buf.length) this.grow(need);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = QUOTE;
    for (let i = start; i < end; i++) {
      const byte = source[i] as number;
      if (byte < 0x20 || byte === QUOTE || byte === BACKSLASH) {
        this.string(source.toString("utf8", start, end));
        return;
      }
      buf[pos++] = byte;
    }
    buf[pos++] = QUOTE;
    this.pos = pos;
  }

  /** Length-delimited bytes at r.pos as a JSON string of their base64. */
  wireBase64(r: Reader): void {
    const length = r.uint32();
    const start = r.pos;
    const end = start + length;
    if (end > r.len) throw new RangeError(`index out of range: ${end} > ${r.len}`);
    r.pos = end;
    this.byte(QUOTE);
    if (length > 0) this.raw((r.buf as ByteSource).toString("base64", start, end));
    this.byte(QUOTE);
  }

  private grow(need: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + need + 1024));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }
}

/** ASCII text as bytes, for the writer's precomputed pieces. */
export function ascii(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

export const TRUE = ascii("true");
export const FALSE = ascii("false");
export const NULL = ascii("null");
export const EMPTY_OBJECT = ascii("{}");
export const EMPTY_ARRAY = ascii("[]");
