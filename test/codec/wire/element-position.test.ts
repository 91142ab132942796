import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LedgerJson, type PackageSignatures } from "../../../src/codec/index.js";
import { offsetReader } from "../../../src/codec/wire/element-position.js";
import { caseOffset } from "../../../src/endpoints/stream-position.js";
import { PackageSignatureIndex } from "../../../src/lf/index.js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import {
  SAMPLE_PACKAGE_ID,
  sampleIds,
  samplePackageSignature,
} from "../../../src/sandbox/sample-package/index.js";

const V2 = "com.daml.ledger.api.v2";
const UPDATES = `${V2}.GetUpdatesResponse`;
const COMPLETIONS = `${V2}.CompletionStreamResponse`;
const protos = ledgerApiProtos();

function encode(typeName: string, value: object): Buffer {
  const type = protos.type(typeName);
  return type.encode(type.fromObject(value)).finish() as Buffer;
}

const readerOf = (typeName: string) => offsetReader(protos.type(typeName));

/** An archive: an event with an `offset` of its own, which is not the transaction's. */
const archived = (offset: string) => ({
  archived: {
    offset,
    nodeId: 3,
    contractId: "00c1",
    templateId: sampleIds.iou,
    packageName: "gateway-samples",
  },
});

const transaction = (offset: string) => ({
  updateId: "u1",
  commandId: "c1",
  // Before the transaction's own offset on the wire, and each with an offset field.
  events: [archived("5"), archived("6")],
  offset,
  synchronizerId: "sync::1220",
  recordTime: { seconds: "1700000000", nanos: 0 },
});

/** Every case of both responses, with the offset each carries. */
const updates: [string, object, number][] = [
  ["a transaction", { transaction: transaction("42") }, 42],
  ["a transaction past 2^32", { transaction: transaction(String(2 ** 40 + 7)) }, 2 ** 40 + 7],
  ["a reassignment", { reassignment: { updateId: "r1", offset: "17", events: [] } }, 17],
  ["a checkpoint", { offsetCheckpoint: { offset: "9", synchronizerTimes: [] } }, 9],
  ["a checkpoint at offset 0 (absent on the wire)", { offsetCheckpoint: { synchronizerTimes: [] } }, 0],
  ["a topology transaction", { topologyTransaction: { updateId: "t1", offset: "300", events: [] } }, 300],
];

const completions: [string, object, number][] = [
  [
    "a completion",
    { completion: { commandId: "c1", updateId: "u1", offset: "77", deduplicationOffset: "3" } },
    77,
  ],
  ["a checkpoint", { offsetCheckpoint: { offset: "78" } }, 78],
];

function signatures(): PackageSignatures {
  const index = new PackageSignatureIndex([samplePackageSignature]);
  return {
    resolveDataType: (id) => index.resolveDataType(id),
    resolveTemplate: (id) => index.resolveTemplate(id),
    resolveInterface: (id) => index.resolveInterface(id),
    has: (id) => id === SAMPLE_PACKAGE_ID,
    ensure: async () => undefined,
    resolvePackageName: async () => SAMPLE_PACKAGE_ID,
  };
}

describe("offsetReader", () => {
  for (const [typeName, cases] of [
    [UPDATES, updates],
    [COMPLETIONS, completions],
  ] as const) {
    for (const [what, value, offset] of cases) {
      it(`reads the offset of ${what} (${typeName.slice(V2.length + 1)}) from its bytes, as its text has it`, async () => {
        const bytes = encode(typeName, value);
        assert.equal(readerOf(typeName)?.(bytes), offset);
        const json = new LedgerJson(protos.root, signatures());
        const text = await json.wireText(typeName)(bytes, undefined);
        const oneof = typeName === UPDATES ? "update" : "completionResponse";
        assert.equal(caseOffset(oneof)(text), offset, "parsed from the text");
      });
    }
  }

  it("reads nothing of an element with no case, and has no reader for responses without offsets", () => {
    assert.equal(readerOf(UPDATES)?.(encode(UPDATES, {})), undefined);
    assert.equal(readerOf(`${V2}.GetActiveContractsResponse`), undefined);
    assert.equal(readerOf(`${V2}.GetLedgerEndResponse`), undefined);
  });
});

describe("LedgerJson.transcoded", () => {
  it("knows the offset of the element transcoded last, by its text, and of no other", async () => {
    const json = new LedgerJson(protos.root, signatures());
    const toText = json.wireText(UPDATES);
    const first = (await toText(encode(UPDATES, { transaction: transaction("42") }), undefined)) as string;
    assert.equal(json.transcoded.offsetOf(first), 42);
    const second = (await toText(
      encode(UPDATES, { offsetCheckpoint: { offset: "43" } }),
      undefined,
    )) as string;
    assert.equal(json.transcoded.offsetOf(second), 43);
    assert.equal(json.transcoded.offsetOf(first), undefined, "an earlier element: read from its text");
    assert.equal(caseOffset("update", json.transcoded)(first), 42, "which caseOffset then does");
    // An answer of another type leaves it as it was.
    json.wireText(`${V2}.GetLedgerEndResponse`)(
      encode(`${V2}.GetLedgerEndResponse`, { offset: "5" }),
      undefined,
    );
    assert.equal(json.transcoded.offsetOf(second), 43);
  });
});
