import type { LedgerIdentifier, LedgerValue } from "../../lf/index.js";
import type {
  Create__Output,
  DamlTransaction__Output,
  Exercise__Output,
  Fetch__Output,
  Metadata__Output,
  PreparedTransaction__Output,
  Value__Output,
} from "../../proto/ledger-api-types.js";
import { HashEncoder, HashingError } from "./hash-encoder.js";

/**
 * `preparedTransactionHash` of hashing scheme V2, as Canton's "External Signing Hashing
 * Algorithm" specifies it: the transaction (version, then each root node hashed on its own,
 * children recursively) and the metadata are each hashed with the PreparedSubmission purpose,
 * then both hashes with the purpose and the scheme byte `0x02`. Input is the PreparedTransaction
 * as @grpc/proto-loader decodes it (PROTO_OPTIONS), so a wallet can recompute the hash from the
 * bytes it was given. V2 knows no contract keys: a key, `by_key` or a QueryByKey node fails.
 */
export interface PreparedTransactionHash {
  readonly hash: Buffer;
  readonly transactionHash: Buffer;
  readonly metadataHash: Buffer;
  /** The encoding explained, one line per appended field (when `trace` was asked). */
  readonly details: string | undefined;
}

/** HashPurpose.PreparedSubmission (48) as the 4-byte prefix. */
const PURPOSE = Buffer.from([0, 0, 0, 0x30]);
const SCHEME_V2 = 0x02;
const NODE_ENCODING_VERSION = 0x01;
const METADATA_ENCODING_VERSION = 0x01;

type Node = DamlTransaction__Output["nodes"][number];
type NodeSeed = DamlTransaction__Output["nodeSeeds"][number];
type InputContract = Metadata__Output["inputContracts"][number];

export function hashPreparedTransactionV2(
  prepared: PreparedTransaction__Output,
  options: { trace?: boolean } = {},
): PreparedTransactionHash {
  const trace = options.trace === true;
  if (prepared.transaction === null) throw new HashingError("the prepared transaction has no transaction");
  if (prepared.metadata === null) throw new HashingError("the prepared transaction has no metadata");
  const transaction = encodeTransaction(prepared.transaction, trace);
  const metadata = encodeMetadata(prepared.metadata, trace);
  const final = new HashEncoder(trace)
    .raw(PURPOSE, "Hash Purpose")
    .byte(SCHEME_V2, "02 (Hashing Scheme Version)")
    .raw(transaction.hash, "Transaction")
    .raw(metadata.hash, "Metadata");
  const details = trace
    ? [
        "# Transaction",
        ...transaction.lines,
        "# Metadata",
        ...metadata.lines,
        "# Prepared Transaction",
        ...final.trace(),
      ].join("\n")
    : undefined;
  return {
    hash: final.sha256(),
    transactionHash: transaction.hash,
    metadataHash: metadata.hash,
    details,
  };
}

interface Encoded {
  readonly hash: Buffer;
  readonly lines: readonly string[];
}

/** The transaction's hash: purpose, serialization version, the hashes of its root nodes. */
export function encodeTransaction(transaction: DamlTransaction__Output, trace: boolean): Encoded {
  const nodes = new NodeEncoder(transaction.nodes, transaction.nodeSeeds, trace);
  const out = new HashEncoder(trace).raw(PURPOSE, "Hash Purpose").comment("Serialization Version");
  out.string(transaction.version).comment("Root Nodes");
  out.repeated(transaction.roots, (id) => out.raw(nodes.hashOf(id), "(Hashed Root Node)"));
  return { hash: out.sha256(), lines: out.trace() };
}

/** The metadata's hash: everything the submitter commits to besides the ledger changes. */
export function encodeMetadata(metadata: Metadata__Output, trace: boolean): Encoded {
  const out = new HashEncoder(trace)
    .raw(PURPOSE, "Hash Purpose")
    .byte(METADATA_ENCODING_VERSION, "01 (Metadata Encoding Version)")
    .comment("Act As Parties");
  out.strings(metadata.submitterInfo?.actAs ?? []).comment("Command Id");
  out.string(metadata.submitterInfo?.commandId ?? "").comment("Transaction UUID");
  out.string(metadata.transactionUuid).comment("Mediator Group");
  out.int32(metadata.mediatorGroup).comment("Synchronizer Id");
  out.string(metadata.synchronizerId).comment("Min Time Boundary");
  out.optional(metadata.minLedgerEffectiveTime, (t) => out.int64(t)).comment("Max Time Boundary");
  out.optional(metadata.maxLedgerEffectiveTime, (t) => out.int64(t)).comment("Preparation Time");
  out.int64(metadata.preparationTime).comment("Disclosed Contracts");
  out.repeated(metadata.inputContracts, (contract) => encodeInputContract(out, contract));
  return { hash: out.sha256(), lines: out.trace() };
}

function encodeInputContract(out: HashEncoder, contract: InputContract): void {
  if (!contract.v1) throw new HashingError("an input contract has no v1 create node");
  out.comment("Created At").int64(contract.createdAt).comment("Create Contract");
  // An input contract's create node has no seed: the node id is none of the transaction's.
  const node = new HashEncoder(out.tracing);
  encodeCreate(node, contract.v1, undefined);
  out.nested(node.trace()).raw(node.sha256(), "Disclosed Contract");
}

/** One node's hash (the hash its parent or the transaction encodes for it). */
export function hashTransactionNode(transaction: DamlTransaction__Output, nodeId: string): Buffer {
  return new NodeEncoder(transaction.nodes, transaction.nodeSeeds, false).hashOf(nodeId);
}

/** Node hashes by node id; each node is looked up by id and hashed on its own, children first. */
class NodeEncoder {
  private readonly byId = new Map<string, Node>();
  private readonly seeds = new Map<string, Buffer>();

  constructor(
    nodes: readonly Node[],
    seeds: readonly NodeSeed[],
    private readonly trace: boolean,
  ) {
    for (const node of nodes) this.byId.set(node.nodeId, node);
    for (const seed of seeds) this.seeds.set(String(seed.nodeId), Buffer.from(seed.seed));
  }

  hashOf(nodeId: string): Buffer {
    const node = this.byId.get(nodeId);
    if (node === undefined) throw new HashingError(`the transaction has no node ${nodeId}`);
    const v1 = node.v1;
    if (!v1) throw new HashingError(`node ${nodeId} has no v1 content`);
    const out = new HashEncoder(this.trace);
    switch (v1.nodeType) {
      case "create":
        encodeCreate(out, v1.create as Create__Output, this.seeds.get(nodeId));
        break;
      case "exercise":
        this.encodeExercise(out, nodeId, v1.exercise as Exercise__Output);
        break;
      case "fetch":
        encodeFetch(out, v1.fetch as Fetch__Output);
        break;
      case "rollback":
        out.byte(NODE_ENCODING_VERSION, "01 (Node Encoding Version)").comment("Rollback Node");
        out.byte(0x03, "Rollback Node Tag").comment("Children");
        this.children(out, v1.rollback?.children ?? []);
        break;
      case "queryByKey":
        throw new HashingError("QueryByKey nodes need hashing scheme V3");
      default:
        throw new HashingError(`node ${nodeId} has no node type`);
    }
    return out.sha256();
  }

  private children(out: HashEncoder, ids: readonly string[]): void {
    out.repeated(ids, (id) => out.raw(this.hashOf(id), "(Hashed Inner Node)"));
  }

  private encodeExercise(out: HashEncoder, nodeId: string, exercise: Exercise__Output): void {
    if (exercise.key != null || exercise.byKey)
      throw new HashingError("contract keys need hashing scheme V3");
    const seed = this.seeds.get(nodeId);
    if (seed === undefined) throw new HashingError(`the exercise node ${nodeId} has no seed`);
    out.byte(NODE_ENCODING_VERSION, "01 (Node Encoding Version)").comment("Exercise Node");
    out.comment("Node Version").string(exercise.lfVersion);
    out.byte(0x01, "Exercise Node Tag").comment("Node Seed").raw(seed, "seed");
    commonNodeFields(out, exercise);
    out.comment("Acting Parties").strings(exercise.actingParties).comment("Interface Id");
    out.optional(exercise.interfaceId, (id) => encodeIdentifier(out, id)).comment("Choice Id");
    out.string(exercise.choiceId).comment("Chosen Value");
    encodeValue(out, required(exercise.chosenValue, "chosen_value"));
    out.comment("Consuming").bool(exercise.consuming).comment("Exercise Result");
    out.optional(exercise.exerciseResult, (v) => encodeValue(out, v));
    out.comment("Choice Observers").strings(exercise.choiceObservers).comment("Children");
    this.children(out, exercise.children);
  }
}

/** Contract id, package name, template id, signatories and stakeholders, as every node starts. */
function commonNodeFields(out: HashEncoder, node: Create__Output | Exercise__Output | Fetch__Output): void {
  out.comment("Contract Id").hex(node.contractId, "contractId");
  out.comment("Package Name").string(node.packageName).comment("Template Id");
  encodeIdentifier(out, required(node.templateId, "template_id"));
  if ("argument" in node) {
    out.comment("Arg");
    encodeValue(out, required(node.argument, "argument"));
  }
  out.comment("Signatories").strings(node.signatories);
  out.comment("Stakeholders").strings(node.stakeholders);
}

function encodeCreate(out: HashEncoder, create: Create__Output, seed: Buffer | undefined): void {
  if (create.key != null) throw new HashingError("contract keys need hashing scheme V3");
  out.byte(NODE_ENCODING_VERSION, "01 (Node Encoding Version)").comment("Create Node");
  out.comment("Node Version").string(create.lfVersion);
  out.byte(0x00, "Create Node Tag").comment("Node Seed");
  out.optional(seed, (s) => out.raw(s, "node seed"));
  commonNodeFields(out, create);
}

function encodeFetch(out: HashEncoder, fetch: Fetch__Output): void {
  if (fetch.key != null || fetch.byKey) throw new HashingError("contract keys need hashing scheme V3");
  out.byte(NODE_ENCODING_VERSION, "01 (Node Encoding Version)").comment("Fetch Node");
  out.comment("Node Version").string(fetch.lfVersion);
  out.byte(0x02, "Fetch Node Tag");
  commonNodeFields(out, fetch);
  out.comment("Interface Id").optional(fetch.interfaceId, (id) => encodeIdentifier(out, id));
  out.comment("Acting Parties").strings(fetch.actingParties);
}

/** Package id, then module and entity names split at dots, each as a list of strings. */
function encodeIdentifier(out: HashEncoder, id: LedgerIdentifier): void {
  out.string(id.packageId);
  out.strings(id.moduleName.split("."));
  out.strings(id.entityName.split("."));
}

/** Every case of a Value at once, as the encoder reads the one that is set. */
interface ValueCases {
  readonly sum?: string;
  readonly bool?: boolean;
  readonly int64?: string | number;
  readonly numeric?: string;
  readonly timestamp?: string | number;
  readonly date?: number;
  readonly party?: string;
  readonly text?: string;
  readonly contractId?: string;
  readonly optional?: { readonly value: LedgerValue | null };
  readonly list?: { readonly elements: readonly LedgerValue[] };
  readonly textMap?: { readonly entries: readonly { key: string; value: LedgerValue | null }[] };
  readonly genMap?: {
    readonly entries: readonly { key: LedgerValue | null; value: LedgerValue | null }[];
  };
  readonly record?: {
    readonly recordId: LedgerIdentifier | null;
    readonly fields: readonly { label: string; value: LedgerValue | null }[];
  };
  readonly variant?: {
    readonly variantId: LedgerIdentifier | null;
    readonly constructor: string;
    readonly value: LedgerValue | null;
  };
  readonly enum?: { readonly enumId: LedgerIdentifier | null; readonly constructor: string };
}

/** A Daml value, each kind behind its one-byte type tag. */
export function encodeValue(out: HashEncoder, value: LedgerValue | Value__Output): void {
  const v = value as ValueCases;
  const identifier = (id: LedgerIdentifier) => encodeIdentifier(out, id);
  const inner = (x: LedgerValue | null | undefined, field: string) => encodeValue(out, required(x, field));
  switch (caseOf(v)) {
    case "unit":
      out.byte(0x00, "Unit Type Tag");
      return;
    case "bool":
      out.byte(0x01, "Bool Type Tag").bool(v.bool === true);
      return;
    case "int64":
      out.byte(0x02, "Int64 Type Tag").int64(required(v.int64, "int64"));
      return;
    case "numeric":
      out.byte(0x03, "Numeric Type Tag").string(required(v.numeric, "numeric"), "numeric");
      return;
    case "timestamp":
      out.byte(0x04, "Timestamp Type Tag").int64(required(v.timestamp, "timestamp"));
      return;
    case "date":
      out.byte(0x05, "Date Type Tag").int32(required(v.date, "date"));
      return;
    case "party":
      out.byte(0x06, "Party Type Tag").string(required(v.party, "party"), "party");
      return;
    case "text":
      out.byte(0x07, "Text Type Tag").string(required(v.text, "text"));
      return;
    case "contractId":
      out.byte(0x08, "ContractId Type Tag").hex(required(v.contractId, "contract_id"), "contractId");
      return;
    case "optional":
      out.byte(0x09, "Optional Type Tag").optional(v.optional?.value, (x) => encodeValue(out, x));
      return;
    case "list":
      out.byte(0x0a, "List Type Tag").repeated(v.list?.elements ?? [], (x) => encodeValue(out, x));
      return;
    case "textMap":
      out.byte(0x0b, "TextMap Type Tag").repeated(v.textMap?.entries ?? [], (e) => {
        out.string(e.key);
        inner(e.value, "text_map.value");
      });
      return;
    case "record": {
      const record = required(v.record, "record");
      out.byte(0x0c, "Record Type Tag").optional(record.recordId, identifier);
      out.repeated(record.fields, (field) => {
        out.optional(field.label, (label) => out.string(label));
        inner(field.value, "record.field.value");
      });
      return;
    }
    case "variant": {
      const variant = required(v.variant, "variant");
      out.byte(0x0d, "Variant Type Tag").optional(variant.variantId, identifier);
      out.string(variant.constructor);
      inner(variant.value, "variant.value");
      return;
    }
    case "enum": {
      const enumValue = required(v.enum, "enum");
      out.byte(0x0e, "Enum Type Tag").optional(enumValue.enumId, identifier);
      out.string(enumValue.constructor);
      return;
    }
    case "genMap":
      out.byte(0x0f, "GenMap Type Tag").repeated(v.genMap?.entries ?? [], (e) => {
        inner(e.key, "gen_map.key");
        inner(e.value, "gen_map.value");
      });
      return;
    default:
      throw new HashingError("a value has no case set");
  }
}

const VALUE_CASES = [
  "unit",
  "bool",
  "int64",
  "numeric",
  "timestamp",
  "date",
  "party",
  "text",
  "contractId",
  "optional",
  "list",
  "textMap",
  "record",
  "variant",
  "enum",
  "genMap",
] as const;

function caseOf(value: ValueCases): string | undefined {
  if (value.sum !== undefined) return value.sum;
  const record = value as Record<string, unknown>;
  return VALUE_CASES.find((c) => record[c] !== undefined && record[c] !== null);
}

function required<T>(value: T | null | undefined, field: string): T {
  if (value === null || value === undefined) throw new HashingError(`${field} is not set`);
  return value;
}
