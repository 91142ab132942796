import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { requestEncoder } from "../../src/ledger/request-encoder.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";

const protos = ledgerApiProtos();

/** proto-loader's serializer of an RPC's request, and the encoder chosen for it. */
function encoders(service: string, rpc: string) {
  const { definition, requestType } = protos.method(service, rpc);
  const serialize = (request: object) => definition.requestSerialize(request);
  return { serialize, encode: requestEncoder(requestType, serialize) };
}

const party = `alice::1220${"a".repeat(64)}`;
const identifier = { packageId: "b".repeat(64), moduleName: "M", entityName: "T" };

/** Every case of a Daml value, nested, in the shape the JSON codec builds (int64 as strings). */
const value = {
  record: {
    recordId: identifier,
    fields: [
      { label: "unit", value: { unit: {} } },
      { label: "flag", value: { bool: true } },
      { label: "n", value: { int64: "-9223372036854775808" } },
      { label: "big", value: { int64: "9007199254740993" } },
      { label: "day", value: { date: 19_000 } },
      { label: "at", value: { timestamp: "1700000000000001" } },
      { label: "amount", value: { numeric: "-1.5000000000" } },
      { label: "who", value: { party } },
      { label: "text", value: { text: "héllo ✓" } },
      { label: "cid", value: { contractId: `00${"c".repeat(68)}` } },
      { label: "maybe", value: { optional: { value: { optional: {} } } } },
      { label: "xs", value: { list: { elements: [{ int64: "1" }, { int64: "0" }] } } },
      { label: "tm", value: { textMap: { entries: [{ key: "k", value: { text: "v" } }] } } },
      { label: "gm", value: { genMap: { entries: [{ key: { int64: "2" }, value: { bool: false } }] } } },
      { label: "v", value: { variant: { variantId: identifier, constructor: "C", value: { unit: {} } } } },
      { label: "e", value: { enum: { enumId: identifier, constructor: "Red" } } },
    ],
  },
};

const commands = {
  commandId: "c-1",
  workflowId: "",
  userId: "u",
  actAs: [party],
  readAs: [],
  submissionId: "",
  synchronizerId: "",
  deduplicationDuration: { seconds: "30", nanos: 5 },
  minLedgerTimeAbs: { seconds: "1700000000", nanos: 0 },
  commands: [
    { create: { templateId: identifier, createArguments: value.record } },
    { exercise: { templateId: identifier, contractId: "00ab", choice: "Go", choiceArgument: value } },
  ],
  disclosedContracts: [
    {
      templateId: identifier,
      contractId: "00cd",
      createdEventBlob: Buffer.from([0, 1, 2, 254, 255]),
      synchronizerId: "s",
    },
  ],
  packageIdSelectionPreference: ["p1"],
};

describe("requestEncoder", () => {
  it("writes a command with every kind of Daml value as proto-loader's serializer does, without its copy", () => {
    const { serialize, encode } = encoders("CommandService", "SubmitAndWait");
    notStrictEqual(encode, serialize);
    deepStrictEqual(Buffer.from(encode({ commands })), Buffer.from(serialize({ commands })));
  });

  it("writes base64 bytes, numbers given for int64 and absent fields as the serializer does", () => {
    const { serialize, encode } = encoders("CommandSubmissionService", "Submit");
    const request = {
      commands: {
        ...commands,
        disclosedContracts: [{ ...commands.disclosedContracts[0], createdEventBlob: "AAEC/v8=" }],
        deduplicationDuration: { seconds: 30 },
        commandId: undefined,
        workflowId: null,
      },
    };
    deepStrictEqual(Buffer.from(encode(request)), Buffer.from(serialize(request)));
  });

  it("keeps the serializer for a request that holds an enum somewhere: encode cannot write its name", () => {
    const { serialize, encode } = encoders("CommandService", "SubmitAndWaitForTransaction");
    strictEqual(encode, serialize);
  });

  it("decides once per type", () => {
    const { requestType, definition } = protos.method("CommandService", "SubmitAndWait");
    const first = requestEncoder(requestType, definition.requestSerialize);
    strictEqual(
      requestEncoder(requestType, () => new Uint8Array()),
      first,
    );
  });
});
