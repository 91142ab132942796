import { createHash } from "node:crypto";

/**
 * The byte encoding of Canton's external-signing hashing specification: big-endian numbers of
 * the Java type a protobuf field maps to (int32 -> 4 bytes, int64 -> 8), length-prefixed
 * strings and bytes, `0x00`/`0x01 || x` optionals and count-prefixed lists. Each append may
 * carry a note; with tracing on, the notes make the "verbose hashing" explanation.
 */
export class HashEncoder {
  private readonly chunks: Buffer[] = [];
  private readonly lines: string[] | undefined;

  constructor(trace: boolean) {
    this.lines = trace ? [] : undefined;
  }

  get tracing(): boolean {
    return this.lines !== undefined;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  sha256(): Buffer {
    return sha256(this.bytes());
  }

  /** The trace lines (empty without tracing). */
  trace(): readonly string[] {
    return this.lines ?? [];
  }

  comment(text: string): this {
    this.lines?.push(`# ${text}`);
    return this;
  }

  raw(bytes: Buffer, note: string): this {
    this.chunks.push(bytes);
    this.lines?.push(`'${bytes.toString("hex")}' # ${note}`);
    return this;
  }

  /** Lines of a nested encoding (a node hashed on its own), indented under this one. */
  nested(lines: readonly string[]): this {
    if (this.lines) for (const line of lines) this.lines.push(`  ${line}`);
    return this;
  }

  byte(value: number, note: string): this {
    return this.raw(Buffer.from([value]), note);
  }

  bool(value: boolean): this {
    return this.byte(value ? 1 : 0, `${value} (bool)`);
  }

  int32(value: number, note = `${value} (int)`): this {
    if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
      throw new HashingError(`${value} is out of the int32 range`);
    }
    const out = Buffer.alloc(4);
    out.writeInt32BE(value);
    return this.raw(out, note);
  }

  /** A Java long; unsigned 64-bit protobuf fields keep their bits (the top bit is the sign). */
  int64(value: string | number | bigint, note?: string): this {
    const big = BigInt(value);
    const out = Buffer.alloc(8);
    out.writeBigInt64BE(BigInt.asIntN(64, big));
    return this.raw(out, note ?? `${big} (long)`);
  }

  string(value: string, note = "string"): this {
    const utf8 = Buffer.from(value, "utf8");
    this.int32(utf8.length);
    return this.raw(utf8, `${value} (${note})`);
  }

  /** Bytes given in hex (contract ids), length-prefixed. */
  hex(value: string, note: string): this {
    if (!/^([0-9a-fA-F]{2})*$/.test(value)) throw new HashingError(`${note} ${value} is not hexadecimal`);
    const bytes = Buffer.from(value, "hex");
    this.int32(bytes.length);
    return this.raw(bytes, `${value} (${note})`);
  }

  optional<T>(value: T | null | undefined, encode: (value: T) => void): this {
    if (value === null || value === undefined) return this.byte(0, "None");
    this.byte(1, "Some");
    encode(value);
    return this;
  }

  repeated<T>(values: readonly T[], encode: (value: T) => void): this {
    this.int32(values.length);
    for (const value of values) encode(value);
    return this;
  }

  strings(values: readonly string[]): this {
    return this.repeated(values, (v) => this.string(v));
  }
}

/** The specification cannot encode the input (a missing node or seed, a V3-only feature). */
export class HashingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HashingError";
  }
}

function sha256(bytes: Buffer): Buffer {
  return createHash("sha256").update(bytes).digest();
}
