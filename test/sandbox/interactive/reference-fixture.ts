/**
 * A PreparedTransaction (proto-loader input shape) exercising what Canton's own V2 vectors
 * leave out: every value kind nested in one create argument (negative numbers, multi-byte UTF-8,
 * a record without id, an empty label, nested optionals), an exercise with an interface and
 * no result over a fetch and a rollback, several roots, and metadata with two input contracts,
 * both ledger-time bounds, a max record time and a non-zero mediator group.
 */
const id = (packageId: string, moduleName: string, entityName: string) => ({
  packageId,
  moduleName,
  entityName,
});
const PKG = "5ac8409f6a1e0d8b8b2f5a6a32a3d2f2c0e9c1e7a0d6b4f3a2c1d0e9f8a7b6c5";
const ALICE = "alice::1220aa";
const BOB = "bob::1220bb";
const CID1 = "00d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2";
const CID2 = "00f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff";
const seed = (byte: number) => Buffer.alloc(32, byte);

const everyValue = {
  record: {
    recordId: id(PKG, "Main.Sub", "Everything"),
    fields: [
      { label: "unit", value: { unit: {} } },
      { label: "yes", value: { bool: true } },
      { label: "minus", value: { int64: "-9007199254740993" } },
      { label: "amount", value: { numeric: "-0.0000000001" } },
      { label: "at", value: { timestamp: "-1" } },
      { label: "day", value: { date: -719162 } },
      { label: "who", value: { party: BOB } },
      { label: "note", value: { text: "zürich ✓ 🚀" } },
      { label: "cid", value: { contractId: CID2 } },
      { label: "none", value: { optional: {} } },
      { label: "some", value: { optional: { value: { optional: { value: { text: "" } } } } } },
      { label: "items", value: { list: { elements: [{ int64: "1" }, { int64: "2" }] } } },
      { label: "empty", value: { list: { elements: [] } } },
      {
        label: "map",
        value: {
          textMap: {
            entries: [
              { key: "b", value: { int64: "2" } },
              { key: "a", value: { int64: "1" } },
            ],
          },
        },
      },
      {
        label: "gen",
        value: { genMap: { entries: [{ key: { party: ALICE }, value: { list: { elements: [] } } }] } },
      },
      {
        label: "choice",
        value: { variant: { variantId: id(PKG, "Main", "V"), constructor: "Left", value: { unit: {} } } },
      },
      { label: "color", value: { enum: { enumId: id(PKG, "Main", "Color"), constructor: "Red" } } },
      { label: "", value: { record: { fields: [{ label: "inner", value: { bool: false } }] } } },
    ],
  },
};

const create = (contractId: string, argument: object) => ({
  lfVersion: "2.1",
  contractId,
  packageName: "gateway-samples",
  templateId: id(PKG, "Iou", "Iou"),
  argument,
  signatories: [ALICE],
  stakeholders: [ALICE, BOB],
});

export const REFERENCE_PREPARED_TRANSACTION = {
  transaction: {
    version: "2.1",
    roots: ["0", "5"],
    nodes: [
      { nodeId: "0", v1: { create: create(CID1, everyValue) } },
      {
        nodeId: "5",
        v1: {
          exercise: {
            lfVersion: "2.1",
            contractId: CID2,
            packageName: "gateway-samples",
            templateId: id(PKG, "Iou", "Iou"),
            signatories: [ALICE],
            stakeholders: [ALICE, BOB],
            actingParties: [BOB],
            interfaceId: id(PKG, "Iou", "Asset"),
            choiceId: "Describe",
            chosenValue: { record: { recordId: id(PKG, "Iou", "Describe"), fields: [] } },
            consuming: false,
            children: ["6", "7"],
            choiceObservers: [ALICE],
          },
        },
      },
      {
        nodeId: "6",
        v1: {
          fetch: {
            lfVersion: "2.1",
            contractId: CID1,
            packageName: "gateway-samples",
            templateId: id(PKG, "Iou", "Iou"),
            signatories: [ALICE],
            stakeholders: [ALICE, BOB],
            actingParties: [BOB],
          },
        },
      },
      { nodeId: "7", v1: { rollback: { children: ["8"] } } },
      { nodeId: "8", v1: { create: create("00aa", { text: "rolled back" }) } },
    ],
    nodeSeeds: [
      { nodeId: 0, seed: seed(1) },
      { nodeId: 5, seed: seed(5) },
      { nodeId: 8, seed: seed(8) },
    ],
  },
  metadata: {
    submitterInfo: { actAs: [BOB, ALICE], commandId: "cmd-ü" },
    synchronizerId: "synchronizer-1::1220cc",
    mediatorGroup: 3,
    transactionUuid: "0b9d7d5e-7f0e-4b5e-9a0e-2f6f1c1d3e4f",
    preparationTime: "1763900000123456",
    inputContracts: [
      { v1: create(CID2, { text: "input" }), createdAt: "1763800000000000", eventBlob: Buffer.from("blob") },
      { v1: create(CID1, { int64: "0" }), createdAt: "0", eventBlob: Buffer.alloc(0) },
    ],
    minLedgerEffectiveTime: "1763900000000000",
    maxLedgerEffectiveTime: "9223372036854775807",
    maxRecordTime: "1763990000000000",
  },
};
