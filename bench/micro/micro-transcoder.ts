/**
 * Micro-benchmark of one update-stream element, a transaction with one Bench:Tick created
 * event: the object path the gateway had (proto-loader deserialize -> LedgerJson.toJsonNow ->
 * JSON.stringify) against the wire transcoder (wire bytes -> JSON text). Fixed iteration
 * counts after a warm-up, best of a few rounds, so runs compare.
 *
 *   node --import tsx bench/micro/micro-transcoder.ts
 */
import { performance } from "node:perf_hooks";
import { LedgerJson, type PackageSignatures, WireTranscoder } from "../../src/codec/index.js";
import { PackageSignatureIndex, ValueCodec } from "../../src/lf/index.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import {
  SAMPLE_PACKAGE_ID,
  sampleIds,
  samplePackageSignature,
} from "../../src/sandbox/sample-package/index.js";
import { commandLine } from "../lib/command-line.js";

// No options: fixed counts, so that runs compare; --help and a stray flag get the usage line.
commandLine("micro/micro-transcoder.js", {});

const WARMUP = 50_000;
const ITERATIONS = 200_000;
const ROUNDS = 3;
const TYPE = "com.daml.ledger.api.v2.GetUpdatesResponse";
const DECODED = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };

const protos = ledgerApiProtos();
const index = new PackageSignatureIndex([samplePackageSignature]);
const signatures: PackageSignatures = {
  resolveDataType: (id) => index.resolveDataType(id),
  resolveTemplate: (id) => index.resolveTemplate(id),
  resolveInterface: (id) => index.resolveInterface(id),
  has: (id) => id === SAMPLE_PACKAGE_ID,
  ensure: async () => {},
  resolvePackageName: async () => SAMPLE_PACKAGE_ID,
};
const values = new ValueCodec(signatures);
const json = new LedgerJson(protos.root, signatures, values);
const transcoder = new WireTranscoder({ root: protos.root, signatures, values });

const hex = (n: number) => "1220".padEnd(n, "ab3f");
const owner = `bench::${hex(68)}`;
const when = { seconds: "1767225600", nanos: 123_456_000 };
const type = protos.type(TYPE);
const bytes = type
  .encode(
    type.fromObject({
      transaction: {
        updateId: hex(68),
        commandId: "",
        workflowId: "",
        effectiveAt: when,
        offset: "100042",
        synchronizerId: `sandbox::${hex(68)}`,
        recordTime: when,
        traceContext: {},
        events: [
          {
            created: {
              offset: "100042",
              nodeId: 0,
              contractId: `00${hex(136)}`,
              templateId: sampleIds.tick,
              createArguments: {
                fields: [
                  { label: "owner", value: { party: owner } },
                  { label: "seq", value: { int64: "100041" } },
                  { label: "payload", value: { text: "x".repeat(64) } },
                ],
              },
              witnessParties: [owner],
              signatories: [owner],
              createdAt: when,
              packageName: "gateway-samples",
              acsDelta: true,
              representativePackageId: SAMPLE_PACKAGE_ID,
            },
          },
        ],
      },
    }),
  )
  .finish() as Buffer;

const oldPath = () => JSON.stringify(json.toJsonNow(TYPE, type.toObject(type.decode(bytes), DECODED)));
const toText = transcoder.forType(TYPE);
const newPath = () => toText(bytes);
// Key order differs between the paths: compare members, sorted.
const same = (a: string, b: string) => {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([x], [y]) => (x < y ? -1 : 1))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return JSON.stringify(sort(JSON.parse(a))) === JSON.stringify(sort(JSON.parse(b)));
};
if (!same(oldPath(), newPath())) throw new Error("the transcoder's JSON differs from the object path's");

let sink = 0;
function micros(run: () => string): number {
  for (let i = 0; i < WARMUP; i++) sink += run().length;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < ITERATIONS; i++) sink += run().length;
    best = Math.min(best, ((performance.now() - start) * 1000) / ITERATIONS);
  }
  return Number(best.toFixed(3));
}

const decodeOnly = micros(() => (type.toObject(type.decode(bytes), DECODED) ? "" : "x"));
const old = micros(oldPath);
const transcoded = micros(newPath);
console.log(`element: ${bytes.length} bytes protobuf, ${newPath().length} chars JSON`);
console.table([
  { path: "old: deserialize only", "µs/element": decodeOnly },
  { path: "old: deserialize + toJson + stringify", "µs/element": old },
  { path: "new: transcode bytes -> text", "µs/element": transcoded },
]);
console.log(`speed-up ${(old / transcoded).toFixed(2)}x (checksum ${sink % 997})`);
