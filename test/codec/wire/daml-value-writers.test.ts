import assert from "node:assert/strict";
import { describe, it } from "node:test";
import protobuf from "protobufjs";
import { DECODED_OBJECT } from "../../../src/codec/wire/daml-field-writers.js";
import { OFF_PATH, WireValueCompiler } from "../../../src/codec/wire/daml-value-writers.js";
import { TextWriter } from "../../../src/codec/wire/text-writer.js";
import { decodeDalf } from "../../../src/lf/package-decode.js";
import { encodePackage } from "../../../src/lf/package-encode.js";
import { type LfType, type PackageDefinition, SELF_PACKAGE_ID, t } from "../../../src/lf/signature-model.js";
import { PackageSignatureIndex } from "../../../src/lf/signature-resolver.js";
import { ValueCodec } from "../../../src/lf/value-codec.js";
import type { LedgerValue } from "../../../src/lf/value-shapes.js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import { SAMPLE_PACKAGE_ID, sampleDalf } from "../../../src/sandbox/sample-package/index.js";

const self = (entityName: string) => ({ packageId: SELF_PACKAGE_ID, moduleName: "Fixtures", entityName });
/** Shapes the sample package lacks: recursion, trailing Optionals, odd names, generics. */
const fixtures: PackageDefinition = {
  name: "wire-fixtures",
  version: "1.0.0",
  modules: [
    {
      name: "Fixtures",
      dataTypes: [
        {
          name: "Node",
          params: [],
          serializable: true,
          body: {
            kind: "record",
            fields: [
              { name: "value", type: t.int64 },
              { name: "children", type: t.list(t.con(self("Node"))) },
            ],
          },
        },
        {
          name: "Upgradable",
          params: [],
          serializable: true,
          body: {
            kind: "record",
            fields: [
              { name: "a", type: t.int64 },
              { name: "b", type: t.optional(t.int64) },
              { name: "c", type: t.optional(t.optional(t.text)) },
              { name: "d", type: t.optional(t.text) },
            ],
          },
        },
        {
          name: "Odd",
          params: [],
          serializable: true,
          body: {
            kind: "record",
            fields: [
              { name: "constructor", type: t.text },
              { name: "__proto__", type: t.optional(t.text) },
            ],
          },
        },
        {
          name: "Box",
          params: ["a", "n"],
          serializable: true,
          body: {
            kind: "variant",
            constructors: [
              { name: "Empty", type: t.unit },
              { name: "Full", type: t.list(t.variable("a")) },
              { name: "Amount", type: t.numeric(t.variable("n")) },
            ],
          },
        },
      ],
      templates: [],
      interfaces: [],
    },
  ],
};
const fixturesPkg = decodeDalf(encodePackage(fixtures, { lfVersion: "2.2" }).dalf);
const fx = (entityName: string, ...args: LfType[]): LfType =>
  t.con({ packageId: fixturesPkg.packageId, moduleName: "Fixtures", entityName }, ...args);
const sample = (moduleName: string, entityName: string, ...args: LfType[]): LfType =>
  t.con({ packageId: SAMPLE_PACKAGE_ID, moduleName, entityName }, ...args);

const resolver = new PackageSignatureIndex([decodeDalf(sampleDalf), fixturesPkg]);
const codec = new ValueCodec(resolver);
const compiler = new WireValueCompiler(resolver);
const valueType = ledgerApiProtos().type("com.daml.ledger.api.v2.Value");

function encode(value: object): Uint8Array {
  return valueType.encode(valueType.fromObject(value)).finish();
}

/** What the object path writes for these bytes, or the error it throws. */
function objectPath(type: LfType, bytes: Uint8Array): { text?: string; error?: Error } {
  try {
    const decoded = valueType.toObject(valueType.decode(bytes), DECODED_OBJECT) as LedgerValue;
    return { text: JSON.stringify(codec.forType(type).toJson(decoded)) };
  } catch (error) {
    return { error: error as Error };
  }
}

/** What the wire writer writes, or that it left the fast path (any throw is a fallback). */
function wirePath(type: LfType, bytes: Uint8Array): { text?: string; off?: unknown } {
  const w = new TextWriter();
  const r = protobuf.Reader.create(bytes);
  try {
    compiler.compile(type).value(r, bytes.length, w);
    if (r.pos !== bytes.length) return { off: "not all read" };
    return { text: w.text() };
  } catch (error) {
    return { off: error };
  }
}

/** The wire writer writes exactly the object path's text. */
function assertSame(type: LfType, value: object): string {
  const bytes = encode(value);
  const expected = objectPath(type, bytes);
  assert.equal(expected.error, undefined, `object path failed: ${expected.error?.message}`);
  const actual = wirePath(type, bytes);
  assert.equal(actual.off, undefined, `left the wire path: ${String(actual.off)}`);
  assert.equal(actual.text, expected.text);
  return actual.text as string;
}

/** The wire writer leaves the fast path where the object path fails (which then reports it). */
function assertFallsBackOnError(type: LfType, value: object): Error {
  const bytes = encode(value);
  const expected = objectPath(type, bytes);
  assert.ok(expected.error, `object path accepted ${expected.text}`);
  const actual = wirePath(type, bytes);
  assert.equal(actual.text, undefined, `wire path wrote ${actual.text}`);
  return expected.error;
}

/** A value the wire path hands to the object path although it is valid (same text then). */
function assertLeavesForObjectPath(type: LfType, value: object): void {
  const bytes = encode(value);
  assert.equal(objectPath(type, bytes).error, undefined);
  assert.equal(wirePath(type, bytes).off, OFF_PATH);
}

const fromJson = (type: LfType, json: unknown): object => codec.forType(type).toValue(json) as object;

const allTypes = sample("Types", "AllTypes");
const allTypesJson = {
  owner: "Alice::1220aa",
  int: "-9223372036854775808",
  num: "1234567890.0123456789",
  text: 'héllo "quoted" \\ \u0001 \u2028 \u2603 😀',
  flag: true,
  date: "2024-02-29",
  time: "2024-01-31T12:34:56.123456Z",
  party: "Bob::1220bb",
  cid: "00c0ffee",
  opt: "42",
  nested: [[]],
  list: ["a", "b"],
  textMap: { a: "1", "b c": "-2", __proto__x: "3", "": "0" },
  genMap: [
    ["Alice::1220aa", "1"],
    ["Bob::1220bb", "2"],
  ],
  color: "Green",
  shape: { tag: "Rect", value: { width: "1.5000000000", height: "2.0000000000" } },
  pair: { first: "7", second: "seven" },
  unit: {},
};

describe("wire value writers: same text as the object path", () => {
  it("writes Types:AllTypes with every field set, as a Value and as a Record", () => {
    const value = fromJson(allTypes, allTypesJson);
    const text = assertSame(allTypes, value);
    assert.equal(JSON.parse(text).textMap.a, "1");
    const w = new TextWriter();
    const record = (value as { record: object }).record;
    const recordType = ledgerApiProtos().type("com.daml.ledger.api.v2.Record");
    const bytes = recordType.encode(recordType.fromObject(record)).finish();
    compiler.compile(allTypes).record?.(protobuf.Reader.create(bytes), bytes.length, w);
    assert.equal(w.text(), text);
  });

  it("writes AllTypes with Nones, Some None, the other variant case and other enum and scalar values", () => {
    assertSame(
      allTypes,
      fromJson(allTypes, {
        ...allTypesJson,
        int: "0",
        num: "-0.0000000001",
        text: "",
        flag: false,
        date: "0001-01-01",
        time: "1969-12-31T23:59:59.999999Z",
        cid: null,
        opt: null,
        nested: [],
        list: [],
        textMap: {},
        genMap: [],
        color: "Blue",
        shape: { tag: "Circle", value: "3.0000000000" },
      }),
    );
    assertSame(
      allTypes,
      fromJson(allTypes, { ...allTypesJson, nested: [["x"]], time: "9999-12-31T23:59:59.999999Z" }),
    );
    assertSame(
      allTypes,
      fromJson(allTypes, { ...allTypesJson, int: "9223372036854775807", date: "9999-12-31" }),
    );
  });

  it("writes Int64 and Timestamp at every size (short varints and Longs)", () => {
    for (const int64 of [
      "0",
      "1",
      "-1",
      "63",
      "-64",
      "281474976710655",
      "-281474976710656",
      "9007199254740993",
    ]) {
      assertSame(t.int64, { int64 });
    }
    for (const timestamp of ["0", "-1", "1706704496123456", "-62135596800000000", "253402300799999999"]) {
      assertSame(t.timestamp, { timestamp });
    }
  });

  it("nests Optionals as the object path does ([] / [x] inside an Optional, null / x alone)", () => {
    const triple = t.optional(t.optional(t.optional(t.int64)));
    for (const json of [null, [], [[]], [[[]]], [[["5"]]]]) assertSame(triple, fromJson(triple, json));
    const inList = t.list(t.optional(t.text));
    assertSame(inList, fromJson(inList, ["a", null, "b"]));
  });

  it("writes records the ledger shortened, trailing None members left out, null members kept in the middle", () => {
    const up = fx("Upgradable");
    assertSame(up, { record: { fields: [{ value: { int64: "1" } }] } });
    assertSame(up, { record: { fields: [{ value: { int64: "1" } }, { value: { optional: {} } }] } });
    assertSame(up, fromJson(up, { a: "1", c: [] }));
    assertSame(up, fromJson(up, { a: "1", d: "x" }));
    // Fields past the signature that are None (a newer package version) are ignored.
    assertSame(up, {
      record: {
        fields: [
          { value: { int64: "1" } },
          { value: { optional: {} } },
          { value: { optional: {} } },
          { value: { optional: {} } },
          { value: { optional: {} } },
        ],
      },
    });
  });

  it("writes recursive, generic and oddly named types", () => {
    const node = fx("Node");
    assertSame(
      node,
      fromJson(node, {
        value: "1",
        children: [
          { value: "2", children: [] },
          { value: "3", children: [] },
        ],
      }),
    );
    const box = fx("Box", sample("Types", "Pair", t.int64, t.optional(t.text)), { kind: "nat", value: 3 });
    assertSame(
      box,
      fromJson(box, {
        tag: "Full",
        value: [
          { first: "1", second: null },
          { first: "2", second: "x" },
        ],
      }),
    );
    assertSame(box, fromJson(box, { tag: "Amount", value: "1.500" }));
    assertSame(box, fromJson(box, { tag: "Empty", value: {} }));
    const odd = fx("Odd");
    assertSame(odd, fromJson(odd, { constructor: "c", ["__proto__"]: "p" }));
    const genMap = t.genMap(sample("Types", "Pair", t.text, t.int64), sample("Types", "Color"));
    assertSame(genMap, fromJson(genMap, [[{ first: "k", second: "1" }, "Red"]]));
  });

  it("reads labels, record ids and variant ids from verbose ledger output without using them", () => {
    const pair = sample("Types", "Pair", t.int64, t.text);
    const id = { packageId: SAMPLE_PACKAGE_ID, moduleName: "Types", entityName: "Pair" };
    assertSame(pair, {
      record: {
        recordId: id,
        fields: [
          { label: "second", value: { int64: "1" } },
          { label: "first", value: { text: "a" } },
        ],
      },
    });
    assertSame(sample("Types", "Shape"), {
      variant: { variantId: id, constructor: "Circle", value: { numeric: "1.0000000000" } },
    });
    assertSame(sample("Types", "Color"), { enum: { enumId: id, constructor: "Red" } });
  });
});

describe("wire value writers: the object path decides the rest", () => {
  it("leaves ill-matching values to the object path, which throws its error", () => {
    const wrongCase = assertFallsBackOnError(t.int64, { text: "1" });
    assert.match(wrongCase.message, /expected Int64, got text/);
    assertFallsBackOnError(sample("Types", "Color"), { enum: { constructor: "Purple" } });
    assertFallsBackOnError(sample("Types", "Shape"), {
      variant: { constructor: "Square", value: { unit: {} } },
    });
    assertFallsBackOnError(sample("Types", "Shape"), { variant: { constructor: "Circle" } });
    assertFallsBackOnError(fx("Upgradable"), { record: { fields: [] } });
    assertFallsBackOnError(fx("Upgradable"), {
      record: {
        fields: [
          { value: { int64: "1" } },
          { value: { optional: {} } },
          { value: { optional: {} } },
          { value: { optional: {} } },
          { value: { int64: "2" } },
        ],
      },
    });
    assertFallsBackOnError(fx("Upgradable"), { record: { fields: [{ label: "a" }] } });
    assertFallsBackOnError(t.optional(t.int64), { optional: { value: {} } });
    assertFallsBackOnError(t.date, { date: 99_999_999 });
    assertFallsBackOnError(t.textMap(t.int64), { textMap: { entries: [{ key: "a" }] } });
    assertFallsBackOnError(t.genMap(t.int64, t.int64), { genMap: { entries: [{ key: { int64: "1" } }] } });
    assertFallsBackOnError(t.variable("a"), { int64: "1" });
    assertFallsBackOnError(t.numeric(40), { numeric: "1" });
    assertFallsBackOnError(t.unit, {});
  });

  it("leaves TextMaps whose JSON object would reorder or merge keys to the object path", () => {
    const map = t.textMap(t.int64);
    assertLeavesForObjectPath(map, {
      textMap: {
        entries: [
          { key: "b", value: { int64: "1" } },
          { key: "1", value: { int64: "2" } },
        ],
      },
    });
    assertLeavesForObjectPath(map, {
      textMap: {
        entries: [
          { key: "a", value: { int64: "1" } },
          { key: "a", value: { int64: "2" } },
        ],
      },
    });
  });

  it("leaves a Value with two cases set to the object path", () => {
    const bytes = Buffer.concat([encode({ text: "a" }), encode({ int64: "1" })]);
    assert.ok(wirePath(t.text, bytes).off);
  });

  it("throws SignatureNotFoundError at compile time for an unknown data type", () => {
    assert.throws(
      () =>
        new WireValueCompiler(resolver).compile(
          t.con({ packageId: "nope", moduleName: "M", entityName: "T" }),
        ),
      /unknown data type nope:M:T/,
    );
  });
});
