import assert from "node:assert/strict";
import { describe, it } from "node:test";
import protobuf from "protobufjs";
import {
  LedgerJson,
  MessageCodec,
  MissingPackagesError,
  type PackageSignatures,
  WireTranscoder,
} from "../../../src/codec/index.js";
import { PackageSignatureIndex, ValueCodec } from "../../../src/lf/index.js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import {
  SAMPLE_PACKAGE_ID,
  sampleIds,
  samplePackageSignature,
} from "../../../src/sandbox/sample-package/index.js";

const V2 = "com.daml.ledger.api.v2";
const protos = ledgerApiProtos();
const DECODED = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };

/** The sample package as the gateway's cache holds it; `loaded` decides what `has` answers. */
function signatures(loaded = new Set([SAMPLE_PACKAGE_ID])): PackageSignatures & { loaded: Set<string> } {
  const index = new PackageSignatureIndex([samplePackageSignature]);
  return {
    loaded,
    resolveDataType: (id) => (loaded.has(id.packageId) ? index.resolveDataType(id) : undefined),
    resolveTemplate: (id) => (loaded.has(id.packageId) ? index.resolveTemplate(id) : undefined),
    resolveInterface: (id) => (loaded.has(id.packageId) ? index.resolveInterface(id) : undefined),
    has: (id) => loaded.has(id),
    ensure: async (ids) => {
      for (const id of ids) loaded.add(id);
    },
    resolvePackageName: async () => SAMPLE_PACKAGE_ID,
  };
}

function encode(typeName: string, value: object): Buffer {
  const type = protos.type(typeName);
  return type.encode(type.fromObject(value)).finish() as Buffer;
}

/** The frame of the object path: proto-loader's object -> LedgerJson -> JSON.stringify. */
function objectPathText(json: LedgerJson, typeName: string, bytes: Uint8Array): string {
  const type = protos.type(typeName);
  return JSON.stringify(json.toJsonNow(typeName, type.toObject(type.decode(bytes), DECODED)));
}

function setup(loaded?: Set<string>) {
  const sigs = signatures(loaded);
  const values = new ValueCodec(sigs);
  return {
    sigs,
    json: new LedgerJson(protos.root, sigs, values),
    transcoder: new WireTranscoder({ root: protos.root, signatures: sigs, values }),
  };
}

/**
 * Asserts that the transcoder's text parses to what the object path writes, every Daml value
 * written by the wire writers (none through the object path) unless `fallbacks` says otherwise.
 */
function assertSameJson(typeName: string, value: object, fallbacks = 0): unknown {
  const { json, transcoder } = setup();
  const bytes = encode(typeName, value);
  const text = transcoder.forType(typeName)(bytes);
  const expected = JSON.parse(objectPathText(json, typeName, bytes));
  const actual = JSON.parse(text);
  assert.deepEqual(actual, expected);
  assert.equal(transcoder.valueFallbacks, fallbacks);
  return actual;
}

/** Asserts that the transcoder throws what the object path throws (same class, same message). */
function assertSameError(typeName: string, value: object): Error {
  const { json, transcoder } = setup();
  const bytes = encode(typeName, value);
  let expected: Error | undefined;
  try {
    objectPathText(json, typeName, bytes);
  } catch (error) {
    expected = error as Error;
  }
  assert.ok(expected, "the object path accepts the element");
  assert.throws(
    () => transcoder.forType(typeName)(bytes),
    (error: Error) => error.constructor === expected.constructor && error.message === expected.message,
  );
  return expected;
}

const party = (p: string) => ({ party: p });
const iouRecord = {
  fields: [
    { label: "issuer", value: party("bank::1220") },
    { label: "owner", value: party("alice::1220") },
    { value: { text: 'EUR "quoted" \\ \u0001 é ✓' } },
    { value: { numeric: "10.5000000000" } },
    { value: { list: { elements: [party("bob::1220")] } } },
  ],
};
const allTypesRecord = {
  recordId: sampleIds.allTypes,
  fields: [
    { value: party("alice::1220") },
    { value: { int64: "-9223372036854775808" } },
    { value: { numeric: "1234567890.0123456789" } },
    { value: { text: "hello" } },
    { value: { bool: true } },
    { value: { date: 19782 } },
    { value: { timestamp: "1706704496123456" } },
    { value: party("bob::1220") },
    { value: { optional: { value: { contractId: "00c0ffee" } } } },
    { value: { optional: {} } },
    { value: { optional: { value: { optional: {} } } } },
    { value: { list: { elements: [{ text: "a" }, { text: "b" }] } } },
    { value: { textMap: { entries: [{ key: "a", value: { int64: "1" } }] } } },
    { value: { genMap: { entries: [{ key: party("alice::1220"), value: { int64: "2" } }] } } },
    { value: { enum: { constructor: "Green" } } },
    {
      value: {
        variant: {
          constructor: "Rect",
          value: { record: { fields: [{ value: { numeric: "1.5" } }, { value: { numeric: "2.0" } }] } },
        },
      },
    },
    { value: { record: { fields: [{ value: { int64: "7" } }, { value: { text: "seven" } }] } } },
    { value: { unit: {} } },
  ],
};
const ts = { seconds: "1700000000", nanos: 123_456_000 };
const createdIou = {
  offset: "12",
  nodeId: 0,
  contractId: "00abc",
  templateId: sampleIds.iou,
  createArguments: iouRecord,
  createdEventBlob: Buffer.from([1, 2, 3, 250]),
  interfaceViews: [
    {
      interfaceId: sampleIds.asset,
      viewStatus: { code: 0, message: "" },
      viewValue: { fields: [{ value: party("alice::1220") }, { value: { text: "10.5 EUR" } }] },
      implementationPackageId: SAMPLE_PACKAGE_ID,
    },
    { interfaceId: sampleIds.asset, viewStatus: { code: 9, message: "view failed" } },
  ],
  witnessParties: ["alice::1220"],
  signatories: ["bank::1220"],
  observers: ["alice::1220", "bob::1220"],
  createdAt: ts,
  packageName: "gateway-samples",
  acsDelta: true,
  representativePackageId: SAMPLE_PACKAGE_ID,
};
const createdAccount = {
  offset: "13",
  nodeId: 1,
  contractId: "00acc",
  templateId: sampleIds.account,
  contractKey: { record: { fields: [{ value: party("bank::1220") }, { value: { text: "ACC-1" } }] } },
  contractKeyHash: Buffer.from("keyhash"),
  createArguments: {
    fields: [
      { value: party("bank::1220") },
      { value: party("alice::1220") },
      { value: { text: "ACC-1" } },
      { value: { numeric: "100.0000000000" } },
    ],
  },
  createdAt: { seconds: "1700000001", nanos: 0 },
  packageName: "gateway-samples",
};
const createdAllTypes = {
  offset: "14",
  contractId: "00all",
  templateId: sampleIds.allTypes,
  createArguments: allTypesRecord,
};
const tick = {
  offset: "99",
  contractId: "00tick",
  templateId: sampleIds.tick,
  createArguments: {
    fields: [
      { value: party("bench::1220") },
      { value: { int64: "42" } },
      { value: { text: "x".repeat(64) } },
    ],
  },
  witnessParties: ["bench::1220"],
  signatories: ["bench::1220"],
  createdAt: ts,
  packageName: "gateway-samples",
  acsDelta: true,
  representativePackageId: SAMPLE_PACKAGE_ID,
};
const archived = {
  offset: "15",
  nodeId: 2,
  contractId: "00abc",
  templateId: sampleIds.iou,
  witnessParties: ["alice::1220"],
  packageName: "gateway-samples",
  implementedInterfaces: [sampleIds.asset],
};
const exercisedSplit = {
  offset: "16",
  nodeId: 3,
  contractId: "00abc",
  templateId: sampleIds.iou,
  choice: "Split",
  choiceArgument: { record: { fields: [{ value: { numeric: "2.0000000000" } }] } },
  actingParties: ["alice::1220"],
  consuming: true,
  witnessParties: ["alice::1220"],
  lastDescendantNodeId: 5,
  exerciseResult: {
    record: { fields: [{ value: { contractId: "00c1" } }, { value: { contractId: "00c2" } }] },
  },
  packageName: "gateway-samples",
  implementedInterfaces: [sampleIds.asset],
  acsDelta: true,
};
const exercisedInterface = {
  offset: "17",
  nodeId: 6,
  contractId: "00abc",
  templateId: sampleIds.iou,
  interfaceId: sampleIds.asset,
  choice: "Describe",
  choiceArgument: { record: { fields: [] } },
  actingParties: ["alice::1220"],
  witnessParties: ["alice::1220"],
  lastDescendantNodeId: 6,
  exerciseResult: { text: "10.5 EUR" },
};
const exercisedNoResult = {
  offset: "18",
  contractId: "00all",
  templateId: sampleIds.allTypes,
  choice: "Echo",
  choiceArgument: { record: { fields: [{ value: { record: allTypesRecord } }] } },
};

function transaction(events: object[], extra: object = {}) {
  return {
    updateId: "upd-1",
    commandId: "cmd-1",
    workflowId: "",
    effectiveAt: ts,
    events,
    offset: "20",
    synchronizerId: "sync::1220",
    traceContext: { traceparent: "00-abc-def-01" },
    recordTime: { seconds: "1700000002", nanos: 1_000 },
    ...extra,
  };
}

describe("WireTranscoder: same JSON as the object path", () => {
  it("writes an ACS-delta transaction with created (views, blob, key), archived and Tick events", () => {
    const out = assertSameJson(`${V2}.GetUpdatesResponse`, {
      transaction: transaction(
        [{ created: createdIou }, { created: createdAccount }, { archived }, { created: tick }],
        { externalTransactionHash: Buffer.from("hash"), paidTrafficCost: "0" },
      ),
    }) as { update: { Transaction: { value: { events: Record<string, { createArgument?: unknown }>[] } } } };
    const first = out.update.Transaction.value.events[0]?.CreatedEvent?.createArgument;
    assert.equal((first as { currency: string }).currency, 'EUR "quoted" \\ \u0001 é ✓');
  });

  it("writes a ledger-effects transaction with exercised events, results and interface choices", () => {
    assertSameJson(`${V2}.GetUpdatesResponse`, {
      transaction: transaction([
        { exercised: exercisedSplit },
        { created: createdIou },
        { exercised: exercisedInterface },
        { exercised: exercisedNoResult },
        { created: createdAllTypes },
      ]),
    });
  });

  it("writes a transaction with every field unset but the events", () => {
    assertSameJson(`${V2}.GetUpdatesResponse`, { transaction: { events: [{ created: createdAllTypes }] } });
  });

  it("writes absent fields with presence and absent Daml values as null on both paths, as Canton does", () => {
    const out = assertSameJson(`${V2}.GetUpdatesResponse`, {
      transaction: {
        events: [{ created: { ...tick, createArguments: undefined } }, { exercised: exercisedNoResult }],
      },
    }) as {
      update: {
        Transaction: {
          value: Record<string, unknown> & { events: Record<string, Record<string, unknown>>[] };
        };
      };
    };
    const transaction = out.update.Transaction.value;
    // Messages and proto3 optional scalars: null; scalars without presence: their defaults.
    assert.deepEqual(
      {
        traceContext: transaction.traceContext,
        effectiveAt: transaction.effectiveAt,
        externalTransactionHash: transaction.externalTransactionHash,
        paidTrafficCost: transaction.paidTrafficCost,
        updateId: transaction.updateId,
      },
      {
        traceContext: null,
        effectiveAt: null,
        externalTransactionHash: null,
        paidTrafficCost: null,
        updateId: "",
      },
    );
    const [created, exercised] = transaction.events;
    assert.equal(created?.CreatedEvent?.createArgument, null);
    assert.equal(created?.CreatedEvent?.contractKey, null);
    assert.equal(exercised?.ExercisedEvent?.exerciseResult, null);
    assert.equal(exercised?.ExercisedEvent?.interfaceId, null);
  });

  it("writes reassignments (assigned and unassigned events)", () => {
    assertSameJson(`${V2}.GetUpdatesResponse`, {
      reassignment: {
        updateId: "r-1",
        offset: "21",
        events: [
          {
            assigned: {
              source: "sync::a",
              target: "sync::b",
              reassignmentId: "ra",
              submitter: "alice::1220",
              reassignmentCounter: "3",
              createdEvent: createdIou,
            },
          },
          {
            unassigned: {
              reassignmentId: "ru",
              contractId: "00abc",
              templateId: sampleIds.iou,
              source: "sync::a",
              target: "sync::b",
              reassignmentCounter: "18446744073709551615",
              assignmentExclusivity: ts,
              witnessParties: ["alice::1220"],
              offset: "21",
              nodeId: 1,
            },
          },
        ],
        recordTime: ts,
        synchronizerId: "sync::b",
        paidTrafficCost: "9007199254740993",
      },
    });
  });

  it("writes topology transactions, with enums by name and unset enum defaults", () => {
    assertSameJson(`${V2}.GetUpdatesResponse`, {
      topologyTransaction: {
        updateId: "t-1",
        offset: "22",
        synchronizerId: "sync::a",
        recordTime: ts,
        events: [
          {
            participantAuthorizationAdded: {
              partyId: "alice::1220",
              participantId: "p1",
              participantPermission: "PARTICIPANT_PERMISSION_CONFIRMATION",
            },
          },
          { participantAuthorizationRevoked: { partyId: "bob::1220", participantId: "p1" } },
          { participantAuthorizationChanged: { partyId: "carol::1220" } },
          {},
        ],
        traceContext: {},
      },
    });
  });

  it("writes offset checkpoints and an update with no case", () => {
    assertSameJson(`${V2}.GetUpdatesResponse`, {
      offsetCheckpoint: {
        offset: "23",
        synchronizerTimes: [
          { synchronizerId: "sync::a", recordTime: ts },
          { synchronizerId: "sync::b", recordTime: { seconds: "-62135596800", nanos: 0 } },
        ],
      },
    });
    assertSameJson(`${V2}.GetUpdatesResponse`, {});
  });

  it("writes completions: success, failure with status details, both deduplication cases, none", () => {
    const completion = {
      commandId: "cmd-1",
      updateId: "upd-1",
      userId: "alice",
      actAs: ["alice::1220", "bob::1220"],
      submissionId: "sub-1",
      traceContext: { traceparent: "tp", tracestate: "" },
      offset: "30",
      synchronizerTime: { synchronizerId: "sync::a", recordTime: ts },
      paidTrafficCost: "-5",
    };
    assertSameJson(`${V2}.CompletionStreamResponse`, {
      completion: { ...completion, status: { code: 0 }, deduplicationOffset: "7" },
    });
    assertSameJson(`${V2}.CompletionStreamResponse`, {
      completion: {
        ...completion,
        status: {
          code: 6,
          message:
            "DUPLICATE_COMMAND(10,abc): A command with the given command id has already been submitted",
          details: [
            { type_url: "type.googleapis.com/google.rpc.ErrorInfo", value: Buffer.from([10, 3, 65, 66, 67]) },
            { type_url: "type.googleapis.com/google.rpc.RequestInfo", value: Buffer.alloc(0) },
          ],
        },
        deduplicationDuration: { seconds: "30", nanos: 5 },
      },
    });
    assertSameJson(`${V2}.CompletionStreamResponse`, { completion: { commandId: "cmd-2" } });
    assertSameJson(`${V2}.CompletionStreamResponse`, { offsetCheckpoint: { offset: "31" } });
    assertSameJson(`${V2}.CompletionStreamResponse`, {});
  });

  it("writes active contracts: every contract entry case, continuation token, none", () => {
    assertSameJson(`${V2}.GetActiveContractsResponse`, {
      workflowId: "wf",
      activeContract: { createdEvent: createdAccount, synchronizerId: "sync::a", reassignmentCounter: "2" },
      streamContinuationToken: Buffer.from("continue-here"),
    });
    assertSameJson(`${V2}.GetActiveContractsResponse`, {
      incompleteUnassigned: {
        createdEvent: createdIou,
        unassignedEvent: { reassignmentId: "ru", contractId: "00abc", templateId: sampleIds.iou },
      },
    });
    assertSameJson(`${V2}.GetActiveContractsResponse`, {
      incompleteAssigned: { assignedEvent: { source: "a", target: "b", createdEvent: tick } },
    });
    assertSameJson(`${V2}.GetActiveContractsResponse`, { streamContinuationToken: Buffer.from("end") });
  });

  it("reads fields in any wire order and repeated fields split across the message", () => {
    const { json, transcoder } = setup();
    const typeName = `${V2}.CreatedEvent`;
    const writer = protobuf.Writer.create();
    // createArguments (6) before templateId (4), witnessParties (9) split around signatories (10).
    writer.uint32((6 << 3) | 2).bytes(protos.type(`${V2}.Record`).encode(tick.createArguments).finish());
    writer.uint32((9 << 3) | 2).string("a");
    writer.uint32((4 << 3) | 2).bytes(protos.type(`${V2}.Identifier`).encode(sampleIds.tick).finish());
    writer.uint32((10 << 3) | 2).string("s");
    writer.uint32((9 << 3) | 2).string("b");
    writer.uint32((1 << 3) | 0).int64(5);
    const bytes = writer.finish();
    const out = JSON.parse(transcoder.forType(typeName)(bytes));
    assert.deepEqual(out, JSON.parse(objectPathText(json, typeName, bytes)));
    assert.deepEqual(out.witnessParties, ["a", "b"]);
  });
});

describe("WireTranscoder: Daml values the wire writers leave to the object path", () => {
  const withField = (index: number, value: object) => ({
    ...createdAllTypes,
    createArguments: {
      fields: allTypesRecord.fields.map((f, i) => (i === index ? { value } : f)),
    },
  });
  const updates = (...events: object[]) => ({ transaction: transaction(events) });

  it("writes a TextMap whose keys a JSON object reorders through the object path, with its text", () => {
    const textMap = {
      textMap: {
        entries: [
          { key: "b", value: { int64: "1" } },
          { key: "7", value: { int64: "2" } },
        ],
      },
    };
    assertSameJson(
      `${V2}.GetUpdatesResponse`,
      updates({ created: withField(12, textMap) }, { created: tick }),
      1,
    );
  });

  it("throws the object path's error for values that do not match their type", () => {
    const error = assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ created: tick }, { created: withField(1, { text: "1" }) }),
    );
    assert.match(error.message, /int: ledger value does not match the signature: expected Int64, got text/);
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ created: withField(14, { enum: { constructor: "Purple" } }) }),
    );
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ created: { ...tick, createArguments: { fields: [] } } }),
    );
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ exercised: { ...exercisedSplit, choiceArgument: { text: "2" } } }),
    );
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ exercised: { ...exercisedSplit, exerciseResult: { unit: {} } } }),
    );
  });

  it("throws the object path's error for templates, choices and keys the package does not have", () => {
    const unknown = { ...sampleIds.tick, entityName: "Tock" };
    assertSameError(`${V2}.GetUpdatesResponse`, updates({ created: { ...tick, templateId: unknown } }));
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ created: { ...tick, contractKey: { text: "k" } } }),
    );
    assertSameError(
      `${V2}.GetUpdatesResponse`,
      updates({ exercised: { ...exercisedSplit, choice: "Merge" } }),
    );
  });

  it("types the same template and choice again from the cache, among others", () => {
    assertSameJson(
      `${V2}.GetUpdatesResponse`,
      updates(
        { created: tick },
        { created: createdIou },
        { created: tick },
        { exercised: exercisedSplit },
        { exercised: exercisedInterface },
        { exercised: exercisedSplit },
        { created: createdAccount },
        { created: tick },
      ),
    );
  });
});

describe("WireTranscoder: package signatures", () => {
  it("signals the packages it lacks and writes the element once they are loaded", async () => {
    const { sigs, json, transcoder } = setup(new Set());
    const typeName = `${V2}.GetUpdatesResponse`;
    const bytes = encode(typeName, { transaction: transaction([{ created: tick }, { archived }]) });
    const toText = transcoder.forType(typeName);
    assert.throws(
      () => toText(bytes),
      (error: unknown) =>
        error instanceof MissingPackagesError && error.packageIds.join() === SAMPLE_PACKAGE_ID,
    );
    await sigs.ensure([SAMPLE_PACKAGE_ID], undefined);
    assert.deepEqual(JSON.parse(toText(bytes)), JSON.parse(objectPathText(json, typeName, bytes)));
  });
});

describe("WireTranscoder: protobuf scalar rules", () => {
  const source = `
    syntax = "proto3";
    package t;
    enum Color { RED = 0; GREEN = 1; }
    message Inner { string s = 1; }
    message Scalars {
      double d = 1; float f = 2; int32 i32 = 3; uint32 u32 = 4; sint32 s32 = 5; fixed32 f32 = 6;
      sfixed32 sf32 = 7; int64 i64 = 8; uint64 u64 = 9; sint64 s64 = 10; fixed64 f64 = 11;
      sfixed64 sf64 = 12; bool b = 13; string str = 14; bytes by = 15; Color c = 16;
      repeated int64 packed = 17; repeated int32 unpacked = 18 [packed = false];
      repeated Color colors = 19; map<string, Inner> inners = 20; map<int32, string> names = 21;
      optional int32 maybe = 22; Inner inner = 23; repeated double ds = 24;
      oneof choice { string text = 25; Inner message = 26; }
    }`;
  const root = protobuf.Root.fromJSON(protos.root.toJSON());
  protobuf.parse(source, root, { keepCase: false });
  root.resolveAll();
  const sigs = signatures();
  const transcoder = new WireTranscoder({ root, signatures: sigs, values: new ValueCodec(sigs) });
  const codec = new MessageCodec(root, new ValueCodec(sigs));
  const type = root.lookupType("t.Scalars");
  const check = (value: object) => {
    const bytes = type.encode(type.fromObject(value)).finish();
    const expected = codec.toJson("t.Scalars", type.toObject(type.decode(bytes), DECODED));
    const actual = JSON.parse(transcoder.forType("t.Scalars")(bytes));
    assert.deepEqual(actual, JSON.parse(JSON.stringify(expected)));
    return actual;
  };

  it("writes defaults for an empty message", () => {
    const out = check({}) as Record<string, unknown>;
    assert.equal(out.c, "RED");
    assert.deepEqual(out.choice, { Empty: {} });
    assert.equal(out.maybe, null);
  });

  it("writes every scalar type, packed and unpacked repeated fields, maps and oneofs", () => {
    check({
      d: 1.5,
      f: 0.1,
      i32: -7,
      u32: 4_000_000_000,
      s32: -3,
      f32: 9,
      sf32: -9,
      i64: "-1",
      u64: "18446744073709551615",
      s64: "-9007199254740993",
      f64: "123",
      sf64: "-123",
      b: true,
      str: "line\nbreak \u2028",
      by: Buffer.from("bytes"),
      c: 1,
      packed: ["1", "281474976710656", "-2"],
      unpacked: [1, 2, 3],
      colors: [1, 0, 5],
      inners: { a: { s: "x" }, b: {} },
      names: { 1: "one", "-2": "minus two" },
      maybe: 0,
      inner: {},
      ds: [Number.NaN, 2.5],
      message: { s: "m" },
    });
    check({ text: "t", c: 7 });
  });
});
