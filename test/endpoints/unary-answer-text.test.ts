import assert from "node:assert/strict";
import { describe, it } from "node:test";
import protobuf from "protobufjs";
import { LedgerJson, type PackageSignatures, WireTranscoder } from "../../src/codec/index.js";
import { ValueCodec } from "../../src/lf/index.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { seededRandom } from "../support/seeded-random.js";

/**
 * Unary answers go from their bytes to JSON text by the wire path (src/endpoints/grpc-route.ts),
 * streams' transcoder, which its own tests pin on stream elements. This pins it on every answer of
 * every unary Ledger API method: the same JSON as the object path (decode, toObject, the JSON
 * codec, JSON.stringify), the reference the routes answered with before, for arbitrary answers.
 */
const protos = ledgerApiProtos();
const DECODED = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };
/**
 * Left out of arbitrary answers: Daml values (no package here to type them;
 * wire-transcoder.test.ts covers them) and the prepared transaction, whose bytes the wire path
 * keeps as the ledger wrote them (the last test).
 */
const LEFT_OUT = new Set([
  ".com.daml.ledger.api.v2.Value",
  ".com.daml.ledger.api.v2.Record",
  ".com.daml.ledger.api.v2.interactive.PreparedTransaction",
]);

/** Every package counts as loaded; no Daml value is ever typed with it. */
const signatures: PackageSignatures = {
  has: () => true,
  ensure: async () => undefined,
  resolveDataType: () => undefined,
  resolveTemplate: () => undefined,
  resolveInterface: () => undefined,
  resolvePackageName: async (name) => name,
};

function unaryAnswerTypes(): protobuf.Type[] {
  const types = new Map<string, protobuf.Type>();
  const visit = (namespace: protobuf.NamespaceBase) => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Service) {
        for (const method of nested.methodsArray) {
          method.resolve();
          const answer = method.resolvedResponseType;
          if (!method.responseStream && answer) types.set(answer.fullName, answer);
        }
      } else if (nested instanceof protobuf.Namespace) visit(nested);
    }
  };
  visit(protos.root.lookup("com.daml.ledger.api.v2") as protobuf.Namespace);
  return [...types.values()];
}

const STRINGS = ["", "a", "Alice::1220ab", 'é "quoted" \\ \n', "日本語", "\u{1F600}", "x".repeat(300)];
/** Within ±2^53: past it the object path rounds int64 written as JSON numbers (see the last test). */
const INT64S = ["0", "1", "-1", "4294967296", "9007199254740991", "-9007199254740991"];
const NUMBERS = [0, 1, -1, 127, 2 ** 31 - 1, -(2 ** 31), 4294967295, 0.5, -7.25, 1e21];

/** An object of `type` with some fields set: what a ledger may answer. */
function arbitrary(type: protobuf.Type, next: () => number, depth: number): Record<string, unknown> {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const value = (field: protobuf.Field): unknown => {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) return arbitrary(resolved, next, depth + 1);
    if (resolved instanceof protobuf.Enum) return pick(Object.keys(resolved.values));
    switch (field.type) {
      case "string":
        return pick(STRINGS);
      case "bytes":
        return Buffer.from(pick(STRINGS));
      case "bool":
        return next() < 0.5;
      case "double":
      case "float":
        return pick(NUMBERS);
      case "int64":
      case "sint64":
      case "sfixed64":
        return pick(INT64S);
      case "uint64":
      case "fixed64":
        return pick(INT64S.filter((n) => !n.startsWith("-")));
      case "uint32":
      case "fixed32":
        return pick(NUMBERS.filter((n) => Number.isInteger(n) && n >= 0));
      default:
        return pick(NUMBERS.filter((n) => Number.isInteger(n) && n <= 2 ** 31 - 1));
    }
  };
  const object: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    field.resolve();
    const nested = field.resolvedType;
    if (nested instanceof protobuf.Type && (depth > 4 || LEFT_OUT.has(nested.fullName))) continue;
    // At most one case of a oneof, as a ledger writes it.
    if (field.partOf?.oneof.some((name) => name !== field.name && name in object)) continue;
    if (next() < 0.4) continue;
    if (field.map) {
      const entries = Math.floor(next() * 3);
      object[field.name] = Object.fromEntries(
        Array.from({ length: entries }, (_, i) => [`k${i}`, value(field)]),
      );
    } else if (field.repeated) {
      object[field.name] = Array.from({ length: Math.floor(next() * 3) }, () => value(field));
    } else {
      object[field.name] = value(field);
    }
  }
  return object;
}

describe("unary answers: the wire path writes the object path's text", () => {
  const values = new ValueCodec(signatures);
  const json = new LedgerJson(protos.root, signatures, values);
  const transcoder = new WireTranscoder({ root: protos.root, signatures, values });

  it("for 30 arbitrary answers of every unary Ledger API method, and the empty one", () => {
    const types = unaryAnswerTypes();
    assert.ok(types.length > 50, `only ${types.length} answer types found`);
    const next = seededRandom(20261123);
    let refused = 0;
    let compared = 0;
    for (const type of types) {
      const typeName = type.fullName.slice(1);
      const toText = transcoder.forType(typeName);
      const objects = [{}, ...Array.from({ length: 30 }, () => arbitrary(type, next, 0))];
      for (const object of objects) {
        const bytes = Buffer.from(type.encode(type.fromObject(object)).finish());
        const what = `${typeName} ${JSON.stringify(object)}`;
        let reference: string;
        try {
          reference = JSON.stringify(json.toJsonNow(typeName, type.toObject(type.decode(bytes), DECODED)));
        } catch {
          // What the object path cannot write (a timestamp past year 275760, an event of no
          // kind) the wire path refuses too.
          assert.throws(() => toText(bytes), what);
          refused++;
          continue;
        }
        const text = toText(bytes);
        // The same members and values; the wire path writes absent members after the present
        // ones (as on streams), so key order may differ. Parsed values cannot show a lost digit
        // of a large int64 (both parse to the same double): the same characters can.
        assert.deepEqual(JSON.parse(text), JSON.parse(reference), what);
        assert.equal([...text].sort().join(""), [...reference].sort().join(""), what);
        compared++;
      }
    }
    assert.ok(compared > refused * 4, `${compared} compared, ${refused} refused`);
  });

  it("writes an int64 past 2^53 that JSON carries as a number with every digit, where the object path rounded", () => {
    const typeName = "com.daml.ledger.api.v2.Completion";
    const type = protos.type(typeName);
    const object = {
      deduplicationDuration: { seconds: "-9223372036854775808", nanos: 1 },
      offset: "9007199254740993",
    };
    const bytes = Buffer.from(type.encode(type.fromObject(object)).finish());
    const text = transcoder.forType(typeName)(bytes);
    assert.match(text, /"seconds":-9223372036854775808,/);
    assert.match(text, /"offset":9007199254740993,/);
    const reference = JSON.stringify(json.toJsonNow(typeName, type.toObject(type.decode(bytes), DECODED)));
    assert.match(reference, /"seconds":-9223372036854776000,/);
  });

  it("keeps a prepared transaction's bytes as the ledger wrote them, where the object path re-encoded them", () => {
    const typeName = "com.daml.ledger.api.v2.interactive.PrepareSubmissionResponse";
    const type = protos.type(typeName);
    const prepared = protos.type("com.daml.ledger.api.v2.interactive.PreparedTransaction");
    const transaction = { transaction: { roots: ["0"], nodes: [] }, metadata: { preparationTime: "1" } };
    const ledgerBytes = Buffer.from(prepared.encode(prepared.fromObject(transaction)).finish());
    const bytes = Buffer.from(type.encode(type.fromObject({ preparedTransaction: transaction })).finish());
    const text = JSON.parse(transcoder.forType(typeName)(bytes)) as { preparedTransaction: string };
    assert.equal(text.preparedTransaction, ledgerBytes.toString("base64"));
    // The object path wrote every default it had decoded (an empty version, ...) back as bytes.
    const reference = json.toJsonNow(typeName, type.toObject(type.decode(bytes), DECODED)) as typeof text;
    assert.notEqual(reference.preparedTransaction, text.preparedTransaction);
  });
});
