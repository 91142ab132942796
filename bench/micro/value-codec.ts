/**
 * Micro-benchmark of the typed value codec on the update-stream hot path: values per second
 * for a Bench:Tick and a Types:AllTypes payload, JSON -> Value (command submission) and
 * Value -> JSON (events). Fixed iteration counts after a warm-up, so runs compare.
 *
 *   node --import tsx bench/micro/value-codec.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { arch, cpus, platform } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { decodeDar, PackageSignatureIndex, ValueCodec } from "../../src/lf/index.js";
import { sampleDar, sampleIds } from "../../src/sandbox/sample-package/index.js";
import { commandLine } from "../lib/command-line.js";

// No options: fixed counts, so that runs compare; --help and a stray flag get the usage line.
commandLine("micro/value-codec.js", {});

const WARMUP = 20_000;
const ITERATIONS = 200_000;

const tick = { owner: "Alice::1220aa", seq: "123456", payload: "x".repeat(128) };
const allTypes = {
  owner: "Alice::1220aa",
  int: "-9223372036854775808",
  num: "1234567890.0123456789",
  text: "hello",
  flag: true,
  date: "2024-02-29",
  time: "2024-01-31T12:34:56.123456Z",
  party: "Bob::1220bb",
  cid: "00c0ffee",
  opt: "42",
  nested: [[]],
  list: ["a", "b", "c"],
  textMap: { a: "1", b: "2" },
  genMap: [
    ["Alice::1220aa", "1"],
    ["Bob::1220bb", "2"],
  ],
  color: "Green",
  shape: { tag: "Rect", value: { width: "1.5000000000", height: "2.0000000000" } },
  pair: { first: "7", second: "seven" },
  unit: {},
};

const codec = new ValueCodec(new PackageSignatureIndex([decodeDar(sampleDar).main]));

interface Row {
  readonly payload: string;
  readonly direction: "json->value" | "value->json";
  readonly iterations: number;
  readonly valuesPerSecond: number;
  readonly microsPerValue: number;
}

/** Keeps results alive so the optimiser cannot drop the work. */
let sink = 0;

function measure(payload: string, direction: Row["direction"], run: () => unknown): Row {
  for (let i = 0; i < WARMUP; i++) sink ^= run() === undefined ? 1 : 0;
  const start = performance.now();
  for (let i = 0; i < ITERATIONS; i++) sink ^= run() === undefined ? 1 : 0;
  const seconds = (performance.now() - start) / 1000;
  return {
    payload,
    direction,
    iterations: ITERATIONS,
    valuesPerSecond: Math.round(ITERATIONS / seconds),
    microsPerValue: Number(((seconds * 1e6) / ITERATIONS).toFixed(3)),
  };
}

const rows: Row[] = [];
for (const [name, id, json] of [
  ["Bench:Tick", sampleIds.tick, tick],
  ["Types:AllTypes", sampleIds.allTypes, allTypes],
] as const) {
  const c = codec.templatePayload(id);
  const value = c.toValue(json);
  rows.push(measure(name, "json->value", () => c.toValue(json, "createArguments")));
  rows.push(measure(name, "value->json", () => c.toJson(value)));
}

console.table(
  rows.map((r) => ({
    payload: r.payload,
    direction: r.direction,
    "values/s": r.valuesPerSecond.toLocaleString("en-US"),
    "µs/value": r.microsPerValue,
  })),
);

const result = {
  benchmark: "value-codec",
  date: new Date().toISOString(),
  node: process.version,
  platform: `${platform()} ${arch()}`,
  cpu: cpus()[0]?.model ?? "unknown",
  warmupIterations: WARMUP,
  rows,
};
const dir = join(import.meta.dirname, "results");
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "value-codec.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${join("bench", "results", "value-codec.json")} (checksum ${sink})`);
