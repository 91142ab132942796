import { strictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import type { LedgerValue } from "../../../src/lf/index.js";
import { ledgerApiProtos, PROTO_OPTIONS } from "../../../src/proto/ledger-api-protos.js";
import type {
  DamlTransaction__Output,
  Metadata__Output,
  PreparedTransaction__Output,
} from "../../../src/proto/ledger-api-types.js";
import { HashEncoder, HashingError } from "../../../src/sandbox/interactive/hash-encoder.js";
import {
  encodeMetadata,
  encodeTransaction,
  encodeValue,
  hashPreparedTransactionV2,
  hashTransactionNode,
} from "../../../src/sandbox/interactive/prepared-transaction-hash.js";
import { REFERENCE_PREPARED_TRANSACTION } from "./reference-fixture.js";

/*
 * Vectors: Canton's own tests of hashing scheme V2 (repository digital-asset/canton, branch
 * 3.5-open-source-2026-06-10.13), community/common/src/test/scala/com/digitalasset/canton/
 * protocol/hash/: BaseNodeHashTest + v2/NodeHashTest (nodes, transaction, full hash),
 * v2/MetadataHashTest + HashUtilsTest (metadata), ValueHashTest (one value of each kind). Their
 * inputs are rebuilt here in the PreparedTransaction shape; the expected hashes are copied as
 * the facts they are.
 */

const id = (packageId: string, moduleName: string, entityName: string) => ({
  packageId,
  moduleName,
  entityName,
});
const CID1 = "0007e7b5534931dfca8e1b485c105bae4e10808bd13ddc8e897f258015f9d921c5";
const CID2 = "0059b59ad7a6b6066e77b91ced54b8282f0e24e7089944685cb8f22f32fcbc4e1b";
const TEMPLATE = id("package", "module", "name");
const text = (t: string): LedgerValue => ({ text: t });
const int64 = (v: string): LedgerValue => ({ int64: v });
const seed = (hex: string) => Buffer.from(hex, "hex");

type Node = DamlTransaction__Output["nodes"][number];
const node = (nodeId: string, v1: Record<string, unknown>): Node =>
  ({ nodeId, v1: { ...v1, nodeType: Object.keys(v1)[0] }, versionedNode: "v1" }) as unknown as Node;

const create = (contractId: string) => ({
  create: {
    lfVersion: "2.1",
    contractId,
    packageName: "package-name-0",
    templateId: TEMPLATE,
    argument: text("hello"),
    signatories: ["alice", "bob"],
    stakeholders: ["alice", "charlie"],
  },
});
const fetch = (contractId: string) => ({
  fetch: {
    lfVersion: "2.1",
    contractId,
    packageName: "package-name-0",
    templateId: TEMPLATE,
    signatories: ["alice"],
    stakeholders: ["charlie"],
    actingParties: ["alice", "bob"],
    interfaceId: null,
    byKey: false,
  },
});
const exercise = {
  exercise: {
    lfVersion: "2.1",
    contractId: CID1,
    packageName: "package-name-0",
    templateId: TEMPLATE,
    signatories: ["alice"],
    stakeholders: ["charlie"],
    actingParties: ["alice", "bob"],
    interfaceId: id("package", "interface_module", "interface_name"),
    choiceId: "choice",
    chosenValue: int64("31380"),
    consuming: true,
    children: ["0", "2"],
    exerciseResult: text("result"),
    choiceObservers: ["david"],
    byKey: false,
  },
};

/** Canton's test transaction: roots create(0) and rollback(5) over fetch(2) and exercise(4). */
const transaction: DamlTransaction__Output = {
  version: "2.1",
  roots: ["0", "5"],
  nodes: [
    node("0", create(CID1)),
    node("1", create(CID2)),
    node("2", fetch(CID1)),
    node("3", fetch(CID2)),
    node("4", exercise),
    node("5", { rollback: { children: ["2", "4"] } }),
  ],
  nodeSeeds: [
    { nodeId: 0, seed: seed("926bbb6f341bc0092ae65d06c6e284024907148cc29543ef6bff0930f5d52c19") },
    { nodeId: 1, seed: seed("e0c69eae8afb38872fa425c2cdba794176f3b9d97e8eefb7b0e7c831f566458f") },
    { nodeId: 2, seed: seed("4d2a522e9ee44e31b9bef2e3c8a07d43475db87463c6a13c4ea92f898ac8a930") },
    { nodeId: 3, seed: seed("b4f0534e651ac8d5e10d95ddfcafdb123550a5e3185e3fe61ec1746a7222a88e") },
    { nodeId: 4, seed: seed("a867edafa1277f46f879ab92c373a15c2d75c5d86fec741705cee1eb01ef8c9e") },
    { nodeId: 5, seed: seed("5483d5df9b245e662c0e4368b8062e8a0fd24c17ce4ded1a0e452e4ee879dd81") },
  ],
};

/** HashUtilsTest's dummy create node of a disclosed contract (no seed). */
const inputContract = (contractId: string, party: string, createdAt: string) => ({
  createdAt,
  eventBlob: Buffer.alloc(0),
  contract: "v1" as const,
  v1: {
    lfVersion: "2.1",
    contractId,
    packageName: "PkgName",
    templateId: id("-dummyPkg-", "DummyModule", "dummyName"),
    argument: { contractId: "0097a092402108f5593bac7fb3c909cd316910197dd98d603042a45ab85c81e0fd" },
    signatories: [party],
    stakeholders: [party],
  },
});

const metadata = {
  submitterInfo: { actAs: ["alice", "bob"], commandId: "command-id" },
  synchronizerId: "synchronizer::id",
  mediatorGroup: 0,
  transactionUuid: "4c6471d3-4e09-49dd-addf-6cd90e19c583",
  preparationTime: "0",
  // 10 and 20 days after the epoch, in microseconds.
  inputContracts: [inputContract(CID1, "alice", "864000000000"), inputContract(CID2, "bob", "1728000000000")],
  globalKeyMapping: [],
  minLedgerEffectiveTime: String(0xaaaa),
  maxLedgerEffectiveTime: String(0xbbbb),
  // V2 leaves max_record_time out of the hash (V3 adds it).
  maxRecordTime: "2592000000000",
} as unknown as Metadata__Output;

const valueHash = (value: LedgerValue) => {
  const out = new HashEncoder(false);
  encodeValue(out, value);
  return out.sha256().toString("hex");
};

describe("hashing scheme V2: Canton's vectors", () => {
  it("hashes each node kind as Canton's NodeHashTest (V2)", () => {
    strictEqual(
      hashTransactionNode(transaction, "0").toString("hex"),
      "6d2cfe58c2294000592034f4bdfe397fe246901bb8b63e3b9e041bb478e174b7",
    );
    strictEqual(
      hashTransactionNode(transaction, "2").toString("hex"),
      "c962c6098394f3d11cd6f0c795de9517d32a8e3e1979cec76cd2f66254efc610",
    );
    strictEqual(
      hashTransactionNode(transaction, "4").toString("hex"),
      "070970eb4b2de72561dafb67017ca33850650a8103e5134e16044ba78991f48c",
    );
    strictEqual(
      hashTransactionNode(transaction, "5").toString("hex"),
      "7264d5da2fd714427453bedc0d1cdb21f52ac7aec8d4bb5ac0598d25c5fcaed9",
    );
  });

  it("hashes the transaction, the metadata with disclosed contracts, and the whole", () => {
    strictEqual(
      encodeTransaction(transaction, false).hash.toString("hex"),
      "154f334d24a8a5e4d0ce51ac87d93821b3256f885f21d3f779a1640abf481983",
    );
    strictEqual(
      encodeMetadata(metadata, false).hash.toString("hex"),
      "6e89fcbcc9605179a47919b5e65a864e470e7a133f4f9f39b1e4545b223db769",
    );
    const prepared = { transaction, metadata } as PreparedTransaction__Output;
    strictEqual(
      hashPreparedTransactionV2(prepared).hash.toString("hex"),
      "8c311c848db25d36b36fbd59f9483714a11688c2214e3c7cae3e028763520250",
    );
  });

  it("hashes every value kind as Canton's ValueHashTest", () => {
    const ref = id("package", "module", "name");
    const vectors: [LedgerValue, string][] = [
      [{ unit: {} }, "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"],
      [{ bool: true }, "9dcf97a184f32623d11a73124ceb99a5709b083721e878a16d78f596718ba7b2"],
      [{ bool: false }, "47dc540c94ceb704a23875c11273e16bb0b8a87aed84de911f2133568115f254"],
      [text("hello world!"), "a24821b4741b3616920a37dfccf3b1e271184c82fc89377ab22e5d96d9330e5c"],
      [{ numeric: "125.1002" }, "fd23ea3b05b8b0e1d15902cccf7c6c0e6e292f0ae3e96513c8d8cec9d4f9bda9"],
      [{ contractId: CID2 }, "6a3e241cebc1dc5e7574be0cf122edc9cb65ffc3fa59fb069c5ab3bbb4598414"],
      [
        { enum: { enumId: ref, constructor: "ENUM" } },
        "9c8f627c22d6871e111e1f5d1980a6a24bcc6311bbc73fd3932a4d79fa9c09f2",
      ],
      [int64("10"), "a74730eb88baf5118934d3675ccf50eac1e4e873000ecd75b5917c78ee30ef26"],
      [
        { variant: { variantId: ref, constructor: "ENUM", value: { bool: true } } },
        "bceee77c48d80db35f237c3877c6711db19a8c135d2d0323c21f01afc2eb7612",
      ],
      [
        { list: { elements: [text("five"), int64("5"), { bool: true }] } },
        "6049408351d7be2c9d6ae7a1beecf08676fa72955c376c89571a1c5f04f272bd",
      ],
      [
        {
          textMap: {
            entries: [
              { key: "bar", value: text("1284") },
              { key: "foo", value: { numeric: "31380.0" } },
            ],
          },
        },
        "b318100aac8cde766598a0a5bc05451feaec7c90400f75de93100d0c87ec24cf",
      ],
      [
        {
          genMap: {
            entries: [
              { key: int64("5"), value: text("five") },
              { key: int64("10"), value: text("ten") },
            ],
          },
        },
        "523c5247ed42efa40dd6b0165a01c1b14dcede7b39a1f33a3590fc7defc4a610",
      ],
      [{ optional: { value: null } }, "a2c4aed1cf757cd9a509734a267ffc7b1166b55f4c8f9c3e3550c56e743328fc"],
      [
        { optional: { value: text("hello") } },
        "dfba7295cf094b6b3ffdf3e44411793264882b38c810f9dff63148890a466171",
      ],
      // 2024-10-24T16:43:46Z in microseconds; 20020 days after the epoch.
      [{ timestamp: "1729788226000000" }, "18efa9ad9adfa83fc3e84cdbe9c4b9f0e7305376e858e5bd909117209111c9d5"],
      [{ date: 20020 }, "6892b74f329df4e0fd850c0e4d35384d3a4aef0a2f0f32070172c1f121ff632f"],
      [
        {
          record: {
            recordId: ref,
            fields: [
              { label: "field1", value: { bool: true } },
              { label: "field2", value: text("hello") },
            ],
          },
        },
        "ae594f7684700c299af9bc0b83758f2d71836ae6d9ea628d310f0305698df6f2",
      ],
    ];
    for (const [value, expected] of vectors) strictEqual(valueHash(value), expected, JSON.stringify(value));
  });
});

describe("hashing scheme V2: encoding rules", () => {
  it("writes a party as tag 0x06 and a UTF-8 string counted in bytes, not characters", () => {
    const out = new HashEncoder(false);
    encodeValue(out, { party: "é::1220" });
    strictEqual(out.bytes().toString("hex"), `06${"00000008"}${Buffer.from("é::1220").toString("hex")}`);
  });

  it("writes unsigned 64-bit fields as Java longs (top bit = sign) and int32 big-endian", () => {
    const out = new HashEncoder(false).int64("18446744073709551615").int64("-2").int32(-1).int32(5);
    strictEqual(
      out.bytes().toString("hex"),
      "ffffffffffffffff" + "fffffffffffffffe" + "ffffffff" + "00000005",
    );
  });

  it("changes the hash with the metadata and the root order, not with the node ids", () => {
    const prepared = { transaction, metadata } as PreparedTransaction__Output;
    const base = hashPreparedTransactionV2(prepared).hash;
    const otherCommand = {
      transaction,
      metadata: { ...metadata, submitterInfo: { actAs: ["alice", "bob"], commandId: "other" } },
    } as PreparedTransaction__Output;
    strictEqual(hashPreparedTransactionV2(otherCommand).hash.equals(base), false);
    const reversed = { ...transaction, roots: ["5", "0"] };
    strictEqual(
      encodeTransaction(reversed, false).hash.equals(encodeTransaction(transaction, false).hash),
      false,
    );
    // Canton's "not hash NodeIds": every id (and its seed) shifted by one gives the same hash.
    const shift = (nodeId: string) => String(Number(nodeId) + 1);
    const shifted = structuredClone(transaction);
    for (const n of shifted.nodes) {
      n.nodeId = shift(n.nodeId);
      const inner = n.v1?.exercise ?? n.v1?.rollback;
      if (inner) inner.children = inner.children.map(shift);
    }
    shifted.roots = shifted.roots.map(shift);
    for (const s of shifted.nodeSeeds) s.nodeId += 1;
    strictEqual(
      encodeTransaction(shifted, false).hash.toString("hex"),
      "154f334d24a8a5e4d0ce51ac87d93821b3256f885f21d3f779a1640abf481983",
    );
  });

  it("refuses what V2 cannot encode: a missing node, an exercise without seed, a contract key", () => {
    const missing = { ...transaction, roots: ["9"] };
    throws(() => encodeTransaction(missing, false), HashingError);
    const noSeeds = { ...transaction, nodeSeeds: [] };
    throws(() => hashTransactionNode(noSeeds, "4"), /has no seed/);
    const keyed = structuredClone(transaction);
    (keyed.nodes[0]!.v1!.create as { key: unknown }).key = { key: null, maintainers: [] };
    throws(() => hashTransactionNode(keyed, "0"), /hashing scheme V3/);
  });

  it("explains the encoding when asked (verbose hashing)", () => {
    const prepared = { transaction, metadata } as PreparedTransaction__Output;
    const { details, hash } = hashPreparedTransactionV2(prepared, { trace: true });
    strictEqual(hash.toString("hex"), "8c311c848db25d36b36fbd59f9483714a11688c2214e3c7cae3e028763520250");
    strictEqual(details?.includes("'73796e6368726f6e697a65723a3a6964' # synchronizer::id (string)"), true);
    strictEqual(details?.includes("'02' # 02 (Hashing Scheme Version)"), true);
  });
});

describe("hashing scheme V2: Canton's Python reference implementation", () => {
  it("hashes a transaction with every value kind, an interface exercise over fetch and rollback, and input contracts as the reference does", () => {
    /*
     * Vector worked once with Canton's reference implementation (daml_transaction_hashing_v2.py
     * and daml_transaction_hashing_common.py of community/app/src/pack/examples/
     * 08-interactive-submission, branch 3.5-open-source-2026-06-10.13), run on Debian's
     * python3-protobuf with stubs protoc generated from protos/: the fixture was serialized with
     * protobufjs, parsed by PreparedTransaction.FromString and hashed by
     * encode_prepared_transaction(pt, create_nodes_dict(pt)).
     */
    const type = ledgerApiProtos().type("com.daml.ledger.api.v2.interactive.PreparedTransaction");
    const bytes = type.encode(type.fromObject(REFERENCE_PREPARED_TRANSACTION)).finish();
    const decoded = type.toObject(type.decode(bytes), PROTO_OPTIONS) as PreparedTransaction__Output;
    strictEqual(
      hashPreparedTransactionV2(decoded).hash.toString("hex"),
      "0b838fee879e45ff3b4a625707bd84d7fd39999eb2bf50a01e628bf296a82d0d",
    );
  });
});
