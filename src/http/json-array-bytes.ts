/** Size of the buffers the answer is written into: large enough that few are needed. */
const CHUNK_BYTES = 1024 * 1024;
const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/**
 * A JSON array written as UTF-8 bytes from its elements' JSON texts as they arrive, into buffers
 * of 1 MiB: each text is encoded once, straight where the answer's bytes go, and is garbage at
 * once. A list twin's answer then costs its own size in memory, not the texts plus their joined
 * copy plus its encoding (three times the answer, and more while the socket drains).
 */
export class JsonArrayBytes {
  readonly #chunks: Buffer[] = [];
  #current: Buffer;
  #used = 0;
  #elements = 0;
  #sealedBytes = 0;

  /** `chunkBytes`: the buffers' size (smaller in tests, to cross their ends). */
  constructor(private readonly chunkBytes = CHUNK_BYTES) {
    this.#current = Buffer.allocUnsafeSlow(chunkBytes);
  }

  get elements(): number {
    return this.#elements;
  }

  push(text: string): void {
    // A UTF-16 unit never takes more than 3 bytes of UTF-8: when that fits, skip measuring.
    const free = this.#current.length - this.#used;
    if (free < text.length * 3 + 1) {
      const needed = Buffer.byteLength(text) + 1;
      if (free < needed) this.#seal(needed);
    }
    this.#current[this.#used++] = this.#elements === 0 ? OPEN : COMMA;
    this.#used += this.#current.write(text, this.#used, "utf8");
    this.#elements++;
  }

  /** The array's bytes, in order, and their total; the builder is spent. */
  end(): { chunks: Buffer[]; length: number } {
    if (this.#elements === 0) this.#current[this.#used++] = OPEN;
    if (this.#used === this.#current.length) this.#seal(1);
    this.#current[this.#used++] = CLOSE;
    // The last buffer is mostly empty for small answers: keep only its used bytes.
    const last =
      this.#used < this.#current.length / 2
        ? Buffer.from(this.#current.subarray(0, this.#used))
        : this.#current.subarray(0, this.#used);
    this.#chunks.push(last);
    const length = this.#sealedBytes + this.#used;
    this.#current = Buffer.alloc(0);
    this.#used = 0;
    return { chunks: this.#chunks, length };
  }

  #seal(needed: number): void {
    if (this.#used > 0) {
      this.#chunks.push(this.#current.subarray(0, this.#used));
      this.#sealedBytes += this.#used;
    }
    this.#current = Buffer.allocUnsafeSlow(Math.max(this.chunkBytes, needed));
    this.#used = 0;
  }
}
