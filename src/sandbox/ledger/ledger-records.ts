/**
 * The ledger's records: contracts, the nodes of a committed transaction, and the updates the
 * store keeps at offsets. Everything the read side shows is derived from these.
 */
import type { JsonValue, LedgerValue, TypeConName } from "../../lf/index.js";
import type { Status__Output } from "../../proto/ledger-api-types.js";
import type { JsonRecord } from "../models/template-model.js";

export interface ContractKey {
  readonly json: JsonValue;
  /** The key as a labelled Ledger API value. */
  readonly value: LedgerValue;
  /** Identifies the key among all templates (template id + canonical key). */
  readonly hash: string;
  readonly maintainers: readonly string[];
}

export interface StoredContract {
  readonly contractId: string;
  readonly templateId: TypeConName;
  readonly packageName: string;
  readonly argument: JsonRecord;
  /** The create argument as a labelled Ledger API record value. */
  readonly argumentValue: LedgerValue;
  readonly signatories: readonly string[];
  /** Observers without the signatories, as Canton shows them. */
  readonly observers: readonly string[];
  readonly stakeholders: ReadonlySet<string>;
  readonly key: ContractKey | undefined;
  readonly createdAt: Date;
  /** Where the contract was created; 0 for a disclosed contract this participant never saw. */
  createdOffset: number;
  createdNodeId: number;
  createdWorkflowId: string;
  /** Creation order on this participant: the ACS is listed in it and continuation tokens point into it. */
  sequence: number;
  archivedOffset: number | undefined;
  archivedNodeId: number | undefined;
  /** The synchronizer it is assigned to now (its create's, then each assignment's target). */
  synchronizerId: string;
  /** Its unassignments and assignments in offset order: the ACS at an offset reads them. */
  readonly reassignments: ReassignmentUpdate[];
}

interface CreateNode {
  readonly kind: "create";
  readonly nodeId: number;
  readonly contract: StoredContract;
  /** Informees of the node and of all its ancestors. */
  readonly witnesses: readonly string[];
}

export interface ExerciseNode {
  readonly kind: "exercise";
  readonly nodeId: number;
  readonly contract: StoredContract;
  /** Set when the choice is an interface choice. */
  readonly interfaceId: TypeConName | undefined;
  readonly choice: string;
  readonly choiceArgument: LedgerValue;
  readonly actingParties: readonly string[];
  readonly consuming: boolean;
  lastDescendantNodeId: number;
  exerciseResult: LedgerValue | null;
  readonly witnesses: readonly string[];
}

export type TransactionNode = CreateNode | ExerciseNode;

/** What the completion of a command shows besides its outcome. */
export interface CompletionInfo {
  readonly commandId: string;
  readonly userId: string;
  readonly actAs: readonly string[];
  readonly submissionId: string;
  readonly deduplication: DeduplicationPeriod;
}

export type DeduplicationPeriod =
  | { readonly kind: "duration"; readonly seconds: number; readonly nanos: number }
  | { readonly kind: "offset"; readonly offset: number }
  /** Reassignments are not deduplicated. */
  | { readonly kind: "none" };

export interface TransactionUpdate {
  readonly kind: "transaction";
  readonly offset: number;
  readonly updateId: string;
  readonly workflowId: string;
  readonly effectiveAt: Date;
  readonly recordTime: Date;
  readonly synchronizerId: string;
  /** In node id order (pre-order of the tree). */
  readonly nodes: readonly TransactionNode[];
  /** Absent for bulk-preloaded transactions, which have no command behind them. */
  readonly completion: CompletionInfo | undefined;
  /** Contracts created and archived inside this transaction (ACS_DELTA leaves them out). */
  readonly transient: ReadonlySet<string>;
  /** The prepared transaction hash its external submitters signed (interactive submission). */
  readonly externalTransactionHash?: Buffer;
  /**
   * The same hash, as a participant of Canton 3.6 or later records it: shown as the transaction's
   * and its completion's `transaction_hash`, and found by GetUpdateByHash and GetCompletionByHash.
   */
  readonly transactionHash?: Buffer;
  /** The encoded GetUpdatesResponse of the last rendering, keyed by its format (see update-renderer). */
  encoded?: { readonly key: string; readonly bytes: Buffer | undefined };
}

/** One half of a reassignment: the contract leaves `source`, or arrives on `target`. */
export interface ReassignmentStep {
  readonly kind: "unassigned" | "assigned";
  readonly reassignmentId: string;
  readonly contract: StoredContract;
  readonly source: string;
  readonly target: string;
  readonly submitter: string;
  /** The contract's counter after this step (an unassignment adds one). */
  readonly reassignmentCounter: number;
  /** The node id of the event in its update (Canton numbers reassignment events from 0). */
  readonly nodeId: number;
}

/**
 * An unassignment (on the source synchronizer) or an assignment (on the target), each at its
 * own offset, as Canton records the two halves of a reassignment.
 */
export interface ReassignmentUpdate {
  readonly kind: "reassignment";
  readonly offset: number;
  readonly updateId: string;
  readonly workflowId: string;
  readonly recordTime: Date;
  /** The source for an unassignment, the target for an assignment. */
  readonly synchronizerId: string;
  readonly steps: readonly ReassignmentStep[];
  readonly completion: CompletionInfo;
}

/** A command rejected after admission (DUPLICATE_COMMAND): only its completion shows it. */
export interface RejectionUpdate {
  readonly kind: "rejection";
  readonly offset: number;
  readonly recordTime: Date;
  readonly synchronizerId: string;
  readonly completion: CompletionInfo;
  readonly status: Status__Output;
  /** As TransactionUpdate's: the hash of the externally signed transaction it rejected (3.6 on). */
  readonly transactionHash?: Buffer;
}
