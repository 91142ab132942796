import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SignatureNotFoundError, ValueCodecError } from "../../src/lf/errors.js";
import { decodeDalf } from "../../src/lf/package-decode.js";
import { encodePackage } from "../../src/lf/package-encode.js";
import { type LfType, type PackageDefinition, SELF_PACKAGE_ID, t } from "../../src/lf/signature-model.js";
import { PackageSignatureIndex } from "../../src/lf/signature-resolver.js";
import { ValueCodec } from "../../src/lf/value-codec.js";
import type { JsonValue, LedgerValue } from "../../src/lf/value-shapes.js";
import { SAMPLE_PACKAGE_ID, sampleDalf, sampleIds } from "../../src/sandbox/sample-package/index.js";
import { protoRoundTrip } from "./ledger-value-proto.js";

/** Extra shapes the sample package lacks: recursion, trailing Optionals, odd field names, Numeric n. */
const fixtures: PackageDefinition = {
  name: "codec-fixtures",
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
              {
                name: "children",
                type: t.list(
                  t.con({ packageId: SELF_PACKAGE_ID, moduleName: "Fixtures", entityName: "Node" }),
                ),
              },
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
              { name: "c", type: t.optional(t.text) },
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
              { name: "toString", type: t.optional(t.text) },
            ],
          },
        },
        {
          name: "Scaled",
          params: ["n"],
          serializable: true,
          body: { kind: "record", fields: [{ name: "x", type: t.numeric(t.variable("n")) }] },
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

const resolver = new PackageSignatureIndex([decodeDalf(sampleDalf), fixturesPkg]);
const codec = new ValueCodec(resolver);
const sample = (moduleName: string, entityName: string, ...args: LfType[]): LfType =>
  t.con({ packageId: SAMPLE_PACKAGE_ID, moduleName, entityName }, ...args);

const allTypes = {
  owner: "Alice::1220aa",
  int: "-9223372036854775808",
  num: "1234567890.0123456789",
  text: 'héllo "quoted" \u2603',
  flag: true,
  date: "2024-02-29",
  time: "2024-01-31T12:34:56.123456Z",
  party: "Bob::1220bb",
  cid: "00c0ffee",
  opt: "42",
  nested: [[]],
  list: ["a", "b"],
  textMap: { a: "1", "b c": "-2" },
  genMap: [
    ["Alice::1220aa", "1"],
    ["Bob::1220bb", "2"],
  ],
  color: "Green",
  shape: { tag: "Rect", value: { width: "1.5000000000", height: "2.0000000000" } },
  pair: { first: "7", second: "seven" },
  unit: {},
};

/** JSON -> Value -> protobuf bytes -> Value (proto-loader shape) -> JSON. */
function roundTrip(type: LfType, json: unknown): { value: LedgerValue; back: JsonValue } {
  const c = codec.forType(type);
  const value = c.toValue(json, "arg");
  const back = c.toJson(protoRoundTrip(value), "arg");
  return { value, back };
}

function assertFault(type: LfType, json: unknown, path: string, message: string | RegExp) {
  assert.throws(
    () => codec.forType(type).toValue(json, "createArguments"),
    (e: unknown) => {
      assert.ok(e instanceof ValueCodecError, `expected ValueCodecError, got ${String(e)}`);
      assert.equal(e.path, path);
      if (typeof message === "string") assert.equal(e.message, `${path}: ${message}`);
      else assert.match(e.message, message);
      return true;
    },
  );
}

describe("value codec: round trips", () => {
  it("round-trips every field of Types:AllTypes through JSON, Value and protobuf bytes", () => {
    const { value, back } = roundTrip(sample("Types", "AllTypes"), allTypes);
    assert.deepEqual(back, allTypes);
    const fields = "record" in value ? value.record.fields : [];
    assert.deepEqual(
      fields.map((f) => f.label),
      Object.keys(allTypes),
    );
    assert.deepEqual(fields[2]?.value, { numeric: "1234567890.0123456789" });
    assert.deepEqual(fields[6]?.value, { timestamp: "1706704496123456" });
    assert.deepEqual(fields[5]?.value, { date: 19782 });
  });

  it("builds the Value shape proto-loader uses", () => {
    const c = codec.forType(sample("Types", "Shape"));
    assert.deepEqual(c.toValue({ tag: "Circle", value: "2" }), {
      variant: { variantId: null, constructor: "Circle", value: { numeric: "2.0000000000" } },
    });
    assert.deepEqual(codec.forType(sample("Types", "Color")).toValue("Blue"), {
      enum: { enumId: null, constructor: "Blue" },
    });
    assert.deepEqual(codec.forType(t.optional(t.text)).toValue(null), { optional: { value: null } });
    assert.deepEqual(codec.forType(t.textMap(t.bool)).toValue({ k: true }), {
      textMap: { entries: [{ key: "k", value: { bool: true } }] },
    });
    assert.deepEqual(codec.forType(t.genMap(t.text, t.unit)).toValue([["k", {}]]), {
      genMap: { entries: [{ key: { text: "k" }, value: { unit: {} } }] },
    });
  });

  const cases: [string, LfType, unknown, LedgerValue, JsonValue][] = [
    ["Int64 string", t.int64, "123", { int64: "123" }, "123"],
    ["Int64 number", t.int64, -5, { int64: "-5" }, "-5"],
    ["Int64 max", t.int64, "9223372036854775807", { int64: "9223372036854775807" }, "9223372036854775807"],
    ["Numeric string", t.numeric(10), "1.5", { numeric: "1.5000000000" }, "1.5000000000"],
    ["Numeric number", t.numeric(10), 1.5, { numeric: "1.5000000000" }, "1.5000000000"],
    ["Numeric exponent number", t.numeric(10), 1e-7, { numeric: "0.0000001000" }, "0.0000001000"],
    ["Numeric 0", t.numeric(0), "-0", { numeric: "0" }, "0"],
    ["Numeric 37", t.numeric(37), "0.1", { numeric: `0.1${"0".repeat(36)}` }, `0.1${"0".repeat(36)}`],
    ["Numeric trailing zeros", t.numeric(2), "3.1400000", { numeric: "3.14" }, "3.14"],
    ["Text", t.text, "", { text: "" }, ""],
    ["Party", t.party, "Alice::1220", { party: "Alice::1220" }, "Alice::1220"],
    ["ContractId", t.contractId(sample("Iou", "Iou")), "00ab", { contractId: "00ab" }, "00ab"],
    ["Bool", t.bool, false, { bool: false }, false],
    ["Unit", t.unit, {}, { unit: {} }, {}],
    ["Date epoch", t.date, "1970-01-01", { date: 0 }, "1970-01-01"],
    ["Date min", t.date, "0001-01-01", { date: -719162 }, "0001-01-01"],
    ["Date max", t.date, "9999-12-31", { date: 2932896 }, "9999-12-31"],
    [
      "Timestamp offset",
      t.timestamp,
      "2024-01-31T12:00:00+01:00",
      { timestamp: "1706698800000000" },
      "2024-01-31T11:00:00Z",
    ],
    [
      "Timestamp no seconds",
      t.timestamp,
      "2024-01-31T12:00Z",
      { timestamp: "1706702400000000" },
      "2024-01-31T12:00:00Z",
    ],
    [
      "Timestamp fraction",
      t.timestamp,
      "1970-01-01T00:00:00.5Z",
      { timestamp: "500000" },
      "1970-01-01T00:00:00.5Z",
    ],
    [
      "Timestamp nanos dropped",
      t.timestamp,
      "1970-01-01T00:00:00.123456789Z",
      { timestamp: "123456" },
      "1970-01-01T00:00:00.123456Z",
    ],
    [
      "Timestamp before epoch",
      t.timestamp,
      "1969-12-31T23:59:59.999999Z",
      { timestamp: "-1" },
      "1969-12-31T23:59:59.999999Z",
    ],
    [
      "Timestamp min",
      t.timestamp,
      "0001-01-01T00:00:00Z",
      { timestamp: "-62135596800000000" },
      "0001-01-01T00:00:00Z",
    ],
    [
      "Timestamp max",
      t.timestamp,
      "9999-12-31T23:59:59.999999Z",
      { timestamp: "253402300799999999" },
      "9999-12-31T23:59:59.999999Z",
    ],
    ["Optional None", t.optional(t.int64), null, { optional: { value: null } }, null],
    ["Optional Some", t.optional(t.int64), "1", { optional: { value: { int64: "1" } } }, "1"],
    ["nested None", t.optional(t.optional(t.text)), [], { optional: { value: null } }, []],
    [
      "nested Some None",
      t.optional(t.optional(t.text)),
      [[]],
      { optional: { value: { optional: { value: null } } } },
      [[]],
    ],
    [
      "nested Some Some",
      t.optional(t.optional(t.text)),
      [["x"]],
      { optional: { value: { optional: { value: { text: "x" } } } } },
      [["x"]],
    ],
    [
      "triple nested",
      t.optional(t.optional(t.optional(t.int64))),
      [[["1"]]],
      { optional: { value: { optional: { value: { optional: { value: { int64: "1" } } } } } } },
      [[["1"]]],
    ],
    [
      "List of Optional",
      t.list(t.optional(t.int64)),
      [null, "2"],
      { list: { elements: [{ optional: { value: null } }, { optional: { value: { int64: "2" } } }] } },
      [null, "2"],
    ],
    ["empty List", t.list(t.text), [], { list: { elements: [] } }, []],
    [
      "TextMap odd keys",
      t.textMap(t.int64),
      JSON.parse('{"__proto__":"1","":"2"}'),
      {
        textMap: {
          entries: [
            { key: "__proto__", value: { int64: "1" } },
            { key: "", value: { int64: "2" } },
          ],
        },
      },
      JSON.parse('{"__proto__":"1","":"2"}'),
    ],
    [
      "GenMap",
      t.genMap(t.party, t.int64),
      [["A", "1"]],
      { genMap: { entries: [{ key: { party: "A" }, value: { int64: "1" } }] } },
      [["A", "1"]],
    ],
    ["enum", sample("Types", "Color"), "Red", { enum: { enumId: null, constructor: "Red" } }, "Red"],
    [
      "variant with Numeric",
      sample("Types", "Shape"),
      { tag: "Circle", value: 2.25 },
      { variant: { variantId: null, constructor: "Circle", value: { numeric: "2.2500000000" } } },
      { tag: "Circle", value: "2.2500000000" },
    ],
    [
      "generic record Pair Int64 Text",
      sample("Types", "Pair", t.int64, t.text),
      { first: 1, second: "x" },
      {
        record: {
          recordId: null,
          fields: [
            { label: "first", value: { int64: "1" } },
            { label: "second", value: { text: "x" } },
          ],
        },
      },
      { first: "1", second: "x" },
    ],
    [
      "generic record over a scale (Scaled 2)",
      fx("Scaled", { kind: "nat", value: 2 }),
      { x: "1.5" },
      { record: { recordId: null, fields: [{ label: "x", value: { numeric: "1.50" } }] } },
      { x: "1.50" },
    ],
    [
      "recursive record",
      fx("Node"),
      { value: "1", children: [{ value: "2", children: [] }] },
      {
        record: {
          recordId: null,
          fields: [
            { label: "value", value: { int64: "1" } },
            {
              label: "children",
              value: {
                list: {
                  elements: [
                    {
                      record: {
                        recordId: null,
                        fields: [
                          { label: "value", value: { int64: "2" } },
                          { label: "children", value: { list: { elements: [] } } },
                        ],
                      },
                    },
                  ],
                },
              },
            },
          ],
        },
      },
      { value: "1", children: [{ value: "2", children: [] }] },
    ],
    [
      "fields named like Object.prototype members",
      fx("Odd"),
      { constructor: "c" },
      { record: { recordId: null, fields: [{ label: "constructor", value: { text: "c" } }] } },
      { constructor: "c" },
    ],
  ];
  for (const [name, type, json, expectedValue, expectedJson] of cases) {
    it(`round-trips ${name}`, () => {
      const { value, back } = roundTrip(type, json);
      assert.deepEqual(value, expectedValue);
      assert.deepEqual(back, expectedJson);
    });
  }
});

describe("value codec: records", () => {
  const upgradable = fx("Upgradable");

  it("leaves trailing None fields out of the Value and the JSON, as Canton does", () => {
    const c = codec.forType(upgradable);
    assert.deepEqual(c.toValue({ a: "1" }), {
      record: { recordId: null, fields: [{ label: "a", value: { int64: "1" } }] },
    });
    assert.deepEqual(c.toValue({ a: "1", b: null, c: "x" }), {
      record: {
        recordId: null,
        fields: [
          { label: "a", value: { int64: "1" } },
          { label: "b", value: { optional: { value: null } } },
          { label: "c", value: { optional: { value: { text: "x" } } } },
        ],
      },
    });
    assert.deepEqual(c.toJson(c.toValue({ a: "1", b: "2" })), { a: "1", b: "2" });
    assert.deepEqual(c.toJson(c.toValue({ a: "1", c: "x" })), { a: "1", b: null, c: "x" });
  });

  it("reads ledger records by position: labels may be empty or wrong", () => {
    const c = codec.forType(upgradable);
    const value: LedgerValue = {
      record: {
        recordId: null,
        fields: [
          { label: "", value: { int64: "5" } },
          { label: "zzz", value: { optional: { value: { int64: "6" } } } },
        ],
      },
    };
    assert.deepEqual(c.toJson(value), { a: "5", b: "6" });
    assert.deepEqual(c.toJson(protoRoundTrip(value)), { a: "5", b: "6" });
  });

  it("accepts extra trailing None fields (a newer package version) and rejects extra values", () => {
    const c = codec.forType(sample("Types", "Pair", t.int64, t.text));
    const base = [
      { label: "", value: { int64: "1" } },
      { label: "", value: { text: "x" } },
    ];
    assert.deepEqual(
      c.toJson({
        record: { recordId: null, fields: [...base, { label: "", value: { optional: { value: null } } }] },
      }),
      { first: "1", second: "x" },
    );
    assert.throws(
      () =>
        c.toJson(
          { record: { recordId: null, fields: [...base, { label: "", value: { int64: "3" } }] } },
          "payload",
        ),
      (e: unknown) =>
        e instanceof ValueCodecError &&
        e.path === "payload" &&
        /has 3 fields, the signature only 2/.test(e.message),
    );
  });

  it("accepts unknown fields that are null and rejects unknown fields with a value", () => {
    const c = codec.forType(sample("Bench", "Tick"));
    const tick = { owner: "A", seq: "1", payload: "p" };
    assert.deepEqual(c.toJson(c.toValue({ ...tick, extra: null })), tick);
    assertFault(
      sample("Bench", "Tick"),
      { ...tick, extra: 1 },
      "createArguments.extra",
      "unknown field (record Bench:Tick has no such field)",
    );
  });

  it("names the signature's fields in JSON whatever the Value's labels (verbose or not)", () => {
    const c = codec.templatePayload(sampleIds.tick);
    const unlabelled: LedgerValue = {
      record: {
        recordId: null,
        fields: [
          { label: "", value: { party: "A" } },
          { label: "", value: { int64: "9" } },
          { label: "", value: { text: "p" } },
        ],
      },
    };
    assert.deepEqual(c.toJson(unlabelled), { owner: "A", seq: "9", payload: "p" });
  });
});

describe("value codec: templates, choices, keys, interfaces", () => {
  it("encodes choice arguments and decodes choice results", () => {
    const split = codec.choiceArgument(sampleIds.iou, "Split");
    assert.deepEqual(split.toValue({ splitAmount: 10 }), {
      record: { recordId: null, fields: [{ label: "splitAmount", value: { numeric: "10.0000000000" } }] },
    });
    const result = codec.choiceResult(sampleIds.iou, "Split");
    assert.deepEqual(
      result.toJson({
        record: {
          recordId: null,
          fields: [
            { label: "", value: { contractId: "00a" } },
            { label: "", value: { contractId: "00b" } },
          ],
        },
      }),
      { splitCid: "00a", restCid: "00b" },
    );
    assert.deepEqual(codec.choiceResult(sampleIds.iou, "Transfer").toJson({ contractId: "00c" }), "00c");
    assert.deepEqual(codec.choiceArgument(sampleIds.iou, "Archive").toValue({}), {
      record: { recordId: null, fields: [] },
    });
    assert.deepEqual(
      codec.choiceResult(sampleIds.account, "GetBalance").toJson({ numeric: "5.0000000000" }),
      "5.0000000000",
    );
  });

  it("round-trips the Echo choice of AllTypes (argument and result)", () => {
    const arg = codec.choiceArgument(sampleIds.allTypes, "Echo");
    const value = arg.toValue({ value: allTypes }, "choiceArgument");
    assert.deepEqual(arg.toJson(protoRoundTrip(value)), { value: allTypes });
    const result = codec.choiceResult(sampleIds.allTypes, "Echo");
    assert.deepEqual(
      result.toJson(protoRoundTrip(codec.templatePayload(sampleIds.allTypes).toValue(allTypes))),
      allTypes,
    );
  });

  it("finds interface choices by interface id and through an implementing template", () => {
    assert.deepEqual(codec.choiceResult(sampleIds.asset, "Describe").toJson({ text: "d" }), "d");
    assert.equal(codec.choiceArgument(sampleIds.iou, "Describe").type.kind, "con");
  });

  it("converts contract keys and interface views", () => {
    const key = codec.contractKey(sampleIds.account);
    const value = key.toValue({ bank: "Bank", number: "42" });
    assert.deepEqual(key.toJson(protoRoundTrip(value)), { bank: "Bank", number: "42" });
    const view = codec.interfaceView(sampleIds.asset);
    assert.deepEqual(
      view.toJson({
        record: {
          recordId: null,
          fields: [
            { label: "owner", value: { party: "A" } },
            { label: "description", value: { text: "100 USD" } },
          ],
        },
      }),
      { owner: "A", description: "100 USD" },
    );
  });

  it("reports unknown templates, choices and keys as SignatureNotFoundError", () => {
    const unknown = { ...sampleIds.iou, entityName: "Nope" };
    assert.throws(
      () => codec.templatePayload(unknown),
      (e: unknown) => e instanceof SignatureNotFoundError && e.what === "template",
    );
    assert.throws(
      () => codec.choiceArgument(sampleIds.iou, "Nope"),
      (e: unknown) => e instanceof SignatureNotFoundError && e.what === "choice",
    );
    assert.throws(
      () => codec.contractKey(sampleIds.iou),
      (e: unknown) => e instanceof SignatureNotFoundError && e.what === "contract key",
    );
    assert.throws(
      () => codec.forType(t.con({ packageId: "f".repeat(64), moduleName: "M", entityName: "T" })),
      (e: unknown) => e instanceof SignatureNotFoundError && e.what === "data type",
    );
  });

  it("caches converters: the same type or template gives the same converter", () => {
    assert.equal(codec.templatePayload(sampleIds.iou), codec.templatePayload(sampleIds.iou));
    const type = t.list(t.int64);
    assert.equal(codec.forType(type), codec.forType(type));
  });
});

describe("value codec: ill-typed JSON names the path", () => {
  const allTypesType = sample("Types", "AllTypes");
  const bad = (patch: Record<string, unknown>) => ({ ...allTypes, ...patch });
  const cases: [string, Record<string, unknown>, string, string | RegExp][] = [
    ["Numeric", { num: true }, "createArguments.num", "expected Numeric, got true"],
    [
      "Numeric scale",
      { num: "1.12345678901" },
      "createArguments.num",
      'Numeric 10 allows at most 10 decimal places, got "1.12345678901"',
    ],
    [
      "Numeric range",
      { num: "1".repeat(29) },
      "createArguments.num",
      /Numeric 10 allows at most 28 integer digits/,
    ],
    ["Numeric text", { num: "abc" }, "createArguments.num", 'expected Numeric, got "abc"'],
    ["Int64 decimal", { int: "12.5" }, "createArguments.int", 'expected Int64, got "12.5"'],
    [
      "Int64 range",
      { int: "9223372036854775808" },
      "createArguments.int",
      'Int64 out of range: "9223372036854775808"',
    ],
    ["Int64 unsafe number", { int: 2 ** 60 }, "createArguments.int", /not a safe integer/],
    ["Text", { text: 5 }, "createArguments.text", "expected Text, got 5"],
    ["Bool", { flag: "true" }, "createArguments.flag", 'expected Bool, got "true"'],
    [
      "Date format",
      { date: "31/01/2024" },
      "createArguments.date",
      'expected Date (YYYY-MM-DD), got "31/01/2024"',
    ],
    ["Date calendar", { date: "2023-02-29" }, "createArguments.date", /expected a valid Date/],
    [
      "Timestamp without zone",
      { time: "2024-01-31T12:00:00" },
      "createArguments.time",
      /expected Timestamp \(ISO-8601 with a zone/,
    ],
    [
      "Timestamp range",
      { time: "0000-12-31T23:59:59Z" },
      "createArguments.time",
      /between 0001-01-01 and 9999-12-31/,
    ],
    ["Party", { party: null }, "createArguments.party", "expected Party, got null"],
    [
      "Party missing",
      { party: undefined },
      "createArguments.party",
      "missing required field of record Types:AllTypes",
    ],
    ["ContractId in Optional", { cid: 5 }, "createArguments.cid", "expected ContractId, got 5"],
    ["Optional Int64", { opt: "x" }, "createArguments.opt", 'expected Int64, got "x"'],
    [
      "nested Optional",
      { nested: "x" },
      "createArguments.nested",
      /expected nested Optional \(\[\] for None, \[x\] for Some x\), got "x"/,
    ],
    [
      "nested Optional inner",
      { nested: [["x", "y"]] },
      "createArguments.nested[0]",
      /expected nested Optional/,
    ],
    ["nested Optional value", { nested: [[1]] }, "createArguments.nested[0][0]", "expected Text, got 1"],
    ["List", { list: "a" }, "createArguments.list", 'expected List (an array), got "a"'],
    ["List element", { list: ["a", 1] }, "createArguments.list[1]", "expected Text, got 1"],
    ["TextMap", { textMap: [] }, "createArguments.textMap", "expected TextMap (an object), got an array"],
    ["TextMap value", { textMap: { a: "x" } }, "createArguments.textMap.a", 'expected Int64, got "x"'],
    [
      "TextMap odd key",
      { textMap: { "a b": true } },
      'createArguments.textMap["a b"]',
      "expected Int64, got true",
    ],
    [
      "GenMap",
      { genMap: {} },
      "createArguments.genMap",
      /expected GenMap \(an array of \[key, value\] pairs\)/,
    ],
    [
      "GenMap pair",
      { genMap: [["A"]] },
      "createArguments.genMap[0]",
      "expected a [key, value] pair, got an array",
    ],
    ["GenMap key", { genMap: [[1, "1"]] }, "createArguments.genMap[0][0]", "expected Party, got 1"],
    ["GenMap value", { genMap: [["A", "x"]] }, "createArguments.genMap[0][1]", 'expected Int64, got "x"'],
    [
      "enum",
      { color: "Purple" },
      "createArguments.color",
      'expected one of Red, Green, Blue (enum Types:Color), got "Purple"',
    ],
    [
      "variant shape",
      { shape: "Rect" },
      "createArguments.shape",
      /expected variant Types:Shape \(\{"tag": \.\.\., "value": \.\.\.\}\), got "Rect"/,
    ],
    [
      "variant tag",
      { shape: { tag: "Square", value: {} } },
      "createArguments.shape.tag",
      'unknown constructor "Square" of variant Types:Shape (expected one of Circle, Rect)',
    ],
    [
      "variant value",
      { shape: { tag: "Rect", value: { width: true, height: "1" } } },
      "createArguments.shape.value.width",
      "expected Numeric, got true",
    ],
    [
      "variant record field",
      { shape: { tag: "Rect", value: { width: "1" } } },
      "createArguments.shape.value.height",
      "missing required field of record Types:Shape.Rect",
    ],
    [
      "generic record",
      { pair: { first: "1", second: 2 } },
      "createArguments.pair.second",
      "expected Text, got 2",
    ],
    ["Unit", { unit: [] }, "createArguments.unit", "expected Unit ({}), got an array"],
    ["Unit with keys", { unit: { a: 1 } }, "createArguments.unit", "expected Unit ({}), got an object"],
  ];
  for (const [name, patch, path, message] of cases) {
    it(`${name}: ${path}`, () => assertFault(allTypesType, bad(patch), path, message));
  }

  it("a payload that is not an object names the root", () => {
    assertFault(
      allTypesType,
      [],
      "createArguments",
      "expected record Types:AllTypes (an object), got an array",
    );
  });

  it("without a root path the message starts at the first field", () => {
    assert.throws(
      () => codec.forType(allTypesType).toValue(bad({ num: true })),
      (e: unknown) => e instanceof ValueCodecError && e.message === "num: expected Numeric, got true",
    );
  });
});

describe("value codec: ledger values that do not match the signature", () => {
  const cases: [string, LfType, LedgerValue, string, RegExp][] = [
    ["Int64 as text", t.int64, { text: "1" }, "", /expected Int64, got text/],
    [
      "record field",
      sample("Bench", "Tick"),
      { record: { recordId: null, fields: [{ label: "", value: { int64: "1" } }] } },
      "event.owner",
      /expected Party, got int64/,
    ],
    [
      "enum constructor",
      sample("Types", "Color"),
      { enum: { enumId: null, constructor: "Purple" } },
      "event",
      /expected enum Types:Color/,
    ],
    [
      "variant constructor",
      sample("Types", "Shape"),
      { variant: { variantId: null, constructor: "Square", value: { unit: {} } } },
      "event",
      /expected variant Types:Shape/,
    ],
    ["Timestamp range", t.timestamp, { timestamp: "253402300800000000" }, "event", /Timestamp out of range/],
    [
      "list element",
      t.list(t.text),
      { list: { elements: [{ text: "a" }, { bool: true }] } },
      "event[1]",
      /expected Text, got bool/,
    ],
  ];
  for (const [name, type, value, path, message] of cases) {
    it(name, () => {
      assert.throws(
        () => codec.forType(type).toJson(value, path === "" ? "" : "event"),
        (e: unknown) => e instanceof ValueCodecError && e.path === path && message.test(e.message),
      );
    });
  }
});
