import type { LedgerLookup } from "./commands/command-engine.js";
import type { StoredContract, TransactionNode } from "./ledger-records.js";
import type { LedgerUpdate, SandboxStore } from "./sandbox-store.js";

/**
 * The lookups the store's update log cannot answer by offset: contracts by id, the active
 * contract of each key, the contracts in creation order and updates by id. A committed
 * transaction enters through `applyTransaction`; update ids are indexed lazily, since every
 * kind of update (party allocations too) is appended to the store without passing here; so
 * are the hashes of externally signed transactions (accepted or rejected).
 */
export class LedgerIndex implements LedgerLookup {
  private readonly contracts = new Map<string, StoredContract>();
  private readonly keys = new Map<string, StoredContract>();
  /** Every contract this participant created, in creation order (the ACS is listed in it). */
  readonly contractsInCreationOrder: StoredContract[] = [];
  private readonly offsetsByUpdateId = new Map<string, number>();
  /** Offsets of the updates (transactions and rejections) per recorded transaction hash, in hex. */
  private readonly offsetsByTransactionHash = new Map<string, number[]>();
  private indexedUpdates = 0;

  constructor(private readonly store: SandboxStore) {}

  contract(contractId: string): StoredContract | undefined {
    return this.contracts.get(contractId);
  }

  activeByKey(keyHash: string): StoredContract | undefined {
    return this.keys.get(keyHash);
  }

  /** Finds a transaction or topology update by its update id. */
  updateById(updateId: string): LedgerUpdate | undefined {
    this.indexNewUpdates();
    const offset = this.offsetsByUpdateId.get(updateId);
    return offset === undefined ? undefined : this.store.updateAt(offset);
  }

  /**
   * The updates of the transaction an external party signed as `hash`, oldest first: at most
   * one accepted transaction, and the rejections of its executions (duplicates).
   */
  updatesByTransactionHash(hash: Buffer): LedgerUpdate[] {
    this.indexNewUpdates();
    const offsets = this.offsetsByTransactionHash.get(hash.toString("hex")) ?? [];
    return offsets.flatMap((offset) => this.store.updateAt(offset) ?? []);
  }

  private indexNewUpdates(): void {
    const updates = this.store.updates;
    for (; this.indexedUpdates < updates.length; this.indexedUpdates++) {
      const update = updates[this.indexedUpdates]!;
      if (update.kind !== "rejection") this.offsetsByUpdateId.set(update.updateId, update.offset);
      if ((update.kind === "transaction" || update.kind === "rejection") && update.transactionHash) {
        const key = update.transactionHash.toString("hex");
        const offsets = this.offsetsByTransactionHash.get(key);
        if (offsets === undefined) this.offsetsByTransactionHash.set(key, [update.offset]);
        else offsets.push(update.offset);
      }
    }
  }

  /**
   * The effects of a transaction committed at `offset`: creates become active (in node order),
   * consuming exercises archive their contract and free its key.
   */
  applyTransaction(
    nodes: readonly TransactionNode[],
    offset: number,
    workflowId: string,
    synchronizerId: string,
  ): void {
    for (const node of nodes) {
      const contract = node.contract;
      if (node.kind === "create") {
        contract.createdOffset = offset;
        contract.createdNodeId = node.nodeId;
        contract.createdWorkflowId = workflowId;
        contract.sequence = this.contractsInCreationOrder.length;
        contract.synchronizerId = synchronizerId;
        this.contractsInCreationOrder.push(contract);
        this.contracts.set(contract.contractId, contract);
        if (contract.key !== undefined) this.keys.set(contract.key.hash, contract);
      } else if (node.consuming) {
        contract.archivedOffset = offset;
        contract.archivedNodeId = node.nodeId;
        if (contract.key !== undefined && this.keys.get(contract.key.hash) === contract) {
          this.keys.delete(contract.key.hash);
        }
      }
    }
  }
}
