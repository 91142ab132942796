import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LedgerJson, WireTranscoder } from "../../src/codec/index.js";
import { InvalidJsonError } from "../../src/codec/object/json-path.js";
import type { PackageSignatures } from "../../src/codec/package-signatures.js";
import { PackageSignatureIndex, ValueCodec } from "../../src/lf/index.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";

/*
 * Rule `serialized` (message-rules.ts): Canton's JSON API carries the PreparedTransaction of
 * interactive submission as the base64 of its protobuf bytes, on both paths.
 */
const V2 = "com.daml.ledger.api.v2";
const protos = ledgerApiProtos();
const PREPARED = protos.type(`${V2}.interactive.PreparedTransaction`);
const OBJECT = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };

const noSignatures: PackageSignatures = {
  resolveDataType: () => undefined,
  resolveTemplate: () => undefined,
  resolveInterface: () => undefined,
  has: () => true,
  ensure: async () => {},
  resolvePackageName: async () => "",
};
const values = new ValueCodec(new PackageSignatureIndex([]));
const json = new LedgerJson(protos.root, noSignatures, values);

/** A prepared transaction with a Daml value inside (which JSON alone could not type). */
const prepared = {
  transaction: {
    version: "2.1",
    roots: ["0"],
    nodes: [
      {
        nodeId: "0",
        v1: {
          create: {
            lfVersion: "2.1",
            contractId: "00ab",
            packageName: "p",
            templateId: { packageId: "pkg", moduleName: "M", entityName: "T" },
            argument: { record: { fields: [{ label: "n", value: { int64: "-5" } }] } },
            signatories: ["alice::1220"],
            stakeholders: ["alice::1220"],
          },
        },
      },
    ],
    nodeSeeds: [{ nodeId: 0, seed: Buffer.alloc(32, 7) }],
  },
  metadata: { synchronizerId: "sync::1220", preparationTime: "1700000000000000", transactionUuid: "u" },
};
const bytes = Buffer.from(PREPARED.encode(PREPARED.fromObject(prepared)).finish());

describe("serialized message fields (the prepared transaction as base64 bytes)", () => {
  it("writes PrepareSubmissionResponse.preparedTransaction as the base64 of its bytes, on both paths", async () => {
    const responseType = protos.type(`${V2}.interactive.PrepareSubmissionResponse`);
    const response = {
      preparedTransaction: prepared,
      preparedTransactionHash: Buffer.alloc(32, 1),
      hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
    };
    const wire = Buffer.from(responseType.encode(responseType.fromObject(response)).finish());
    const objectPath = (await json.toJson(
      `${V2}.interactive.PrepareSubmissionResponse`,
      responseType.toObject(responseType.decode(wire), OBJECT),
      undefined,
    )) as Record<string, unknown>;
    // The object path encodes the decoded message again (proto3 defaults written out): the same
    // message, not necessarily the same bytes; the wire path copies the ledger's bytes.
    const decode = (base64: unknown) =>
      PREPARED.toObject(PREPARED.decode(Buffer.from(String(base64), "base64")), OBJECT);
    assert.deepEqual(decode(objectPath.preparedTransaction), decode(bytes.toString("base64")));
    assert.equal(objectPath.hashingSchemeVersion, "HASHING_SCHEME_VERSION_V2");
    const transcoder = new WireTranscoder({ root: protos.root, signatures: noSignatures, values });
    const wirePath = JSON.parse(transcoder.forType(`${V2}.interactive.PrepareSubmissionResponse`)(wire));
    assert.equal(wirePath.preparedTransaction, bytes.toString("base64"));
  });

  it("reads ExecuteSubmissionRequest.preparedTransaction from base64 into the message", async () => {
    const request = (await json.fromJson(
      `${V2}.interactive.ExecuteSubmissionAndWaitRequest`,
      { preparedTransaction: bytes.toString("base64"), submissionId: "s" },
      undefined,
    )) as { preparedTransaction: { transaction: { nodes: { v1: { create: { contractId: string } } }[] } } };
    assert.equal(request.preparedTransaction.transaction.nodes[0]?.v1.create.contractId, "00ab");
  });

  it("refuses a value that is not the base64 of a PreparedTransaction, naming the field", async () => {
    await assert.rejects(
      json.fromJson(`${V2}.interactive.ExecuteSubmissionRequest`, { preparedTransaction: {} }, undefined),
      (error: unknown) => error instanceof InvalidJsonError && /preparedTransaction/.test(error.message),
    );
    await assert.rejects(
      json.fromJson(`${V2}.interactive.ExecuteSubmissionRequest`, { preparedTransaction: "//8=" }, undefined),
      InvalidJsonError,
    );
  });
});
