/**
 * A Map keyed by byte ranges of the wire (identifiers, choice names), for the stream
 * transcoder's per-identifier caches: no key string is made on a hit of the last key, which
 * is compared byte by byte first (events of a stream mostly name what the previous one did).
 */
export class ByteKeyedCache<V> {
  private readonly map = new Map<string, V>();
  /** A copy of the last key found, in a buffer reused from one key to the next. */
  private lastKey = new Uint8Array(128);
  private lastLength = -1;
  private lastValue: V | undefined;

  get size(): number {
    return this.map.size;
  }

  get(buf: Uint8Array, start: number, end: number): V | undefined {
    const length = end - start;
    if (length === this.lastLength) {
      const last = this.lastKey;
      let i = 0;
      while (i < length && buf[start + i] === last[i]) i++;
      if (i === length) return this.lastValue;
    }
    const value = this.map.get(latin1(buf, start, end));
    if (value !== undefined) this.remember(buf, start, end, value);
    return value;
  }

  set(buf: Uint8Array, start: number, end: number, value: V): void {
    this.map.set(latin1(buf, start, end), value);
    this.remember(buf, start, end, value);
  }

  clear(): void {
    this.map.clear();
    this.lastLength = -1;
    this.lastValue = undefined;
  }

  private remember(buf: Uint8Array, start: number, end: number, value: V): void {
    const length = end - start;
    if (length > this.lastKey.length) this.lastKey = new Uint8Array(length * 2);
    const last = this.lastKey;
    for (let i = 0; i < length; i++) last[i] = buf[start + i] as number;
    this.lastLength = length;
    this.lastValue = value;
  }
}

/** Bytes as a one-byte string, one char per byte: distinct bytes give distinct keys. */
function latin1(buf: Uint8Array, start: number, end: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString("latin1", start, end);
}
