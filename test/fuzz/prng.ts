/**
 * The fuzzer's own deterministic random numbers (sfc32, seeded through splitmix32), so that a
 * seed names one exact sequence of requests on every machine and Node version. Each case gets
 * its own generator from (run seed, case index): one case can be replayed alone.
 */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number, stream = 0) {
    let state = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
    const next = () => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.uint32() / 0x1_0000_0000) * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.uint32() / 0x1_0000_0000 < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)] as T;
  }

  /** Characters drawn from `alphabet`. */
  string(length: number, alphabet: string): string {
    const chars = [...alphabet];
    let out = "";
    for (let i = 0; i < length; i++) out += chars[this.int(chars.length)];
    return out;
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(Math.ceil(length / 4) * 4);
    for (let i = 0; i < out.length; i += 4) out.writeUInt32LE(this.uint32(), i);
    return out.subarray(0, length);
  }
}

/** The run's seed: FUZZ_SEED if set (decimal or 0x hex), else one drawn now (and printed by the runner). */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.FUZZ_SEED;
  if (given === undefined || given === "") return (Math.random() * 0x1_0000_0000) >>> 0;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new Error(`FUZZ_SEED must be a non-negative integer, got ${given}`);
  return seed >>> 0;
}
