import { randomBytes } from "node:crypto";
import type { TypeConName } from "../../lf/index.js";
import type {
  Create__Output,
  DamlTransaction__Output,
  Exercise__Output,
  Identifier__Output,
  Metadata__Output,
  PreparedTransaction__Output,
  Value__Output,
} from "../../proto/ledger-api-types.js";
import type { InterpretedTransaction } from "../ledger/commands/command-engine.js";
import type { StoredContract, TransactionNode } from "../ledger/ledger-records.js";
import { identifier } from "../protocol-values.js";

/** The Daml-LF version the sandbox's native models stand for, as nodes and transaction carry it. */
const LF_VERSION = "2.1";

export interface PreparationMetadata {
  readonly actAs: readonly string[];
  readonly commandId: string;
  readonly synchronizerId: string;
  readonly transactionUuid: string;
  readonly preparationTime: Date;
  readonly minLedgerEffectiveTime: Date | undefined;
  readonly maxLedgerEffectiveTime: Date | undefined;
  readonly maxRecordTime: Date | undefined;
  /** Contracts the transaction uses but does not create, with their created event blobs. */
  readonly inputContracts: readonly { readonly contract: StoredContract; readonly blob: Buffer }[];
}

/**
 * The PreparedTransaction of an interpretation, in the shape @grpc/proto-loader reads it (so
 * the hash is computed over exactly what the client receives): node ids are the engine's
 * pre-order numbers, every create and exercise node gets a fresh 32-byte seed, parties are
 * sorted as Canton sorts its party sets.
 */
export function preparedTransactionOf(
  interpreted: InterpretedTransaction,
  metadata: PreparationMetadata,
): PreparedTransaction__Output {
  const nodes = interpreted.nodes;
  const transaction: DamlTransaction__Output = {
    version: LF_VERSION,
    roots: childrenOf(nodes, 0, nodes.length - 1).map(String),
    nodes: nodes.map((node) => ({
      nodeId: String(node.nodeId),
      versionedNode: "v1" as const,
      v1:
        node.kind === "create"
          ? { nodeType: "create" as const, create: createNode(node.contract) }
          : {
              nodeType: "exercise" as const,
              exercise: exerciseNode(node, childrenOf(nodes, node.nodeId + 1, node.lastDescendantNodeId)),
            },
    })),
    nodeSeeds: nodes.map((node) => ({ nodeId: node.nodeId, seed: randomBytes(32) })),
  };
  return { transaction, metadata: metadataOf(metadata) };
}

/** The node ids of the direct children in [first, last] of a pre-order node list. */
function childrenOf(nodes: readonly TransactionNode[], first: number, last: number): number[] {
  const children: number[] = [];
  for (let id = first; id <= last; ) {
    children.push(id);
    const node = nodes[id];
    id = (node?.kind === "exercise" ? node.lastDescendantNodeId : id) + 1;
  }
  return children;
}

const sorted = (parties: Iterable<string>) => [...new Set(parties)].sort();
const value = (v: unknown) => v as Value__Output;
const templateOf = (id: TypeConName) => identifier(id) as Identifier__Output;

function createNode(contract: StoredContract): Create__Output {
  return {
    lfVersion: LF_VERSION,
    contractId: contract.contractId,
    packageName: contract.packageName,
    templateId: templateOf(contract.templateId),
    argument: value(contract.argumentValue),
    signatories: sorted(contract.signatories),
    stakeholders: sorted(contract.stakeholders),
  };
}

function exerciseNode(node: TransactionNode & { kind: "exercise" }, children: number[]): Exercise__Output {
  const contract = node.contract;
  return {
    lfVersion: LF_VERSION,
    contractId: contract.contractId,
    packageName: contract.packageName,
    templateId: templateOf(contract.templateId),
    signatories: sorted(contract.signatories),
    stakeholders: sorted(contract.stakeholders),
    actingParties: sorted(node.actingParties),
    interfaceId: node.interfaceId === undefined ? null : templateOf(node.interfaceId),
    choiceId: node.choice,
    chosenValue: value(node.choiceArgument),
    consuming: node.consuming,
    children: children.map(String),
    exerciseResult: node.exerciseResult === null ? null : value(node.exerciseResult),
    choiceObservers: [],
    byKey: false,
    externalCallResults: [],
  };
}

const micros = (date: Date) => String(BigInt(date.getTime()) * 1000n);

function metadataOf(m: PreparationMetadata): Metadata__Output {
  return {
    submitterInfo: { actAs: sorted(m.actAs), commandId: m.commandId },
    synchronizerId: m.synchronizerId,
    mediatorGroup: 0,
    transactionUuid: m.transactionUuid,
    preparationTime: micros(m.preparationTime),
    inputContracts: m.inputContracts.map(({ contract, blob }) => ({
      contract: "v1" as const,
      v1: createNode(contract),
      createdAt: micros(contract.createdAt),
      eventBlob: blob,
    })),
    globalKeyMapping: [],
    ...(m.minLedgerEffectiveTime ? { minLedgerEffectiveTime: micros(m.minLedgerEffectiveTime) } : {}),
    ...(m.maxLedgerEffectiveTime ? { maxLedgerEffectiveTime: micros(m.maxLedgerEffectiveTime) } : {}),
    ...(m.maxRecordTime ? { maxRecordTime: micros(m.maxRecordTime) } : {}),
  };
}

/** The contracts a transaction uses without creating them, each once, in node order. */
export function inputContractsOf(interpreted: InterpretedTransaction): StoredContract[] {
  const created = new Set(interpreted.created.map((c) => c.contractId));
  const inputs = new Map<string, StoredContract>();
  for (const node of interpreted.nodes) {
    if (node.kind === "exercise" && !created.has(node.contract.contractId)) {
      inputs.set(node.contract.contractId, node.contract);
    }
  }
  return [...inputs.values()];
}
