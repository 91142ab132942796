import { fingerprintOf } from "../identifiers.js";
import type { ModelRegistry } from "../models/model-registry.js";
import { type ErrorOrigin, rpcStatusOf } from "../sandbox-error.js";
import { CommandEngine, type InterpretedTransaction } from "./commands/command-engine.js";
import type { ValidatedCommands } from "./commands/command-validation.js";
import type { ContractIdAllocator } from "./commands/contract-ids.js";
import { Deduplicator } from "./commands/deduplication.js";
import { routeTransaction } from "./commands/synchronizer-routing.js";
import type { ContractDisclosure } from "./contract-disclosure.js";
import { ledgerErrors } from "./ledger-errors.js";
import type { LedgerIndex } from "./ledger-index.js";
import type { RejectionUpdate, TransactionUpdate } from "./ledger-records.js";
import type { SandboxStore } from "./sandbox-store.js";

export type SubmissionOutcome =
  | { readonly kind: "accepted"; readonly update: TransactionUpdate }
  | { readonly kind: "rejected"; readonly update: RejectionUpdate; readonly error: unknown };

/** A transaction update without what its commit assigns: offset, update id and record time. */
export type TransactionToCommit = Omit<
  TransactionUpdate,
  "kind" | "offset" | "updateId" | "recordTime" | "encoded"
>;

/** A transaction `interpret` gave, with what its commit records beside the nodes. */
export interface Interpretation {
  readonly interpreted: InterpretedTransaction;
  readonly effectiveAt: Date;
  readonly externalTransactionHash?: Buffer;
}

/**
 * The write path of commands. A submission is deduplicated, interpreted by the command engine
 * and, when accepted, committed at the next offset of the shared store: the created contracts
 * become active, the consumed ones archived. A duplicate is recorded as a rejection at its own
 * offset (it shows in completions only). Interpretation errors are thrown to the caller and
 * leave no trace, as Canton's synchronous command errors.
 */
export class CommandSubmitter {
  private readonly engine: CommandEngine;
  private readonly deduplicator = new Deduplicator();

  constructor(
    private readonly store: SandboxStore,
    registry: ModelRegistry,
    private readonly contractIds: ContractIdAllocator,
    private readonly index: LedgerIndex,
    private readonly disclosure: ContractDisclosure,
  ) {
    this.engine = new CommandEngine(registry, contractIds);
  }

  submit(commands: ValidatedCommands, origin: ErrorOrigin): SubmissionOutcome {
    return this.submitInterpreted(commands, origin, () => {
      const effectiveAt = new Date();
      return { interpreted: this.interpret(commands, effectiveAt), effectiveAt };
    });
  }

  /** Runs the commands against the ledger as it is now, without committing anything. */
  interpret(commands: ValidatedCommands, effectiveAt: Date): InterpretedTransaction {
    return this.engine.interpret(
      {
        commands: commands.commands,
        actAs: commands.actAs,
        readAs: commands.readAs,
        disclosed: this.disclosure.disclosedContracts(commands.disclosedContracts),
        effectiveAt,
      },
      this.index,
    );
  }

  /**
   * Deduplicates a change and commits the transaction `interpret` gives (called only for a
   * change that is not a duplicate): the command path, and interactive submission's execution
   * of a transaction interpreted when it was prepared. `transactionHash`: recorded on the
   * transaction or its rejection, for the lookups by hash (Canton 3.6 on).
   */
  submitInterpreted(
    commands: ValidatedCommands,
    origin: ErrorOrigin,
    interpret: () => Interpretation,
    transactionHash?: Buffer,
  ): SubmissionOutcome {
    const now = Date.now();
    const changeId = Deduplicator.changeId(commands.userId, commands.actAs, commands.commandId);
    const completion = {
      commandId: commands.commandId,
      userId: commands.userId,
      actAs: commands.actAs,
      submissionId: commands.submissionId,
      deduplication: commands.deduplication,
    };
    const duplicate = this.deduplicator.duplicateOf(changeId, commands.deduplication, now);
    if (duplicate !== undefined) {
      const error = ledgerErrors.duplicateCommand(duplicate.offset, duplicate.submissionId);
      const update = this.store.append(
        (offset): RejectionUpdate => ({
          kind: "rejection",
          offset,
          recordTime: new Date(now),
          synchronizerId: this.store.preferredSynchronizerId,
          completion,
          status: rpcStatusOf(error, origin),
          ...(transactionHash === undefined ? {} : { transactionHash }),
        }),
      );
      return { kind: "rejected", update, error };
    }
    const { interpreted, effectiveAt, externalTransactionHash } = interpret();
    const synchronizerId = routeTransaction(
      this.store,
      commands.synchronizerId,
      interpreted.nodes,
      commands.actAs,
    );
    const update = this.commit({
      nodes: interpreted.nodes,
      transient: interpreted.transient,
      effectiveAt,
      workflowId: commands.workflowId,
      completion,
      synchronizerId,
      ...(externalTransactionHash === undefined ? {} : { externalTransactionHash }),
      ...(transactionHash === undefined ? {} : { transactionHash }),
    });
    this.deduplicator.accept(changeId, {
      offset: update.offset,
      recordTime: now,
      submissionId: commands.submissionId,
    });
    return { kind: "accepted", update };
  }

  /** Appends a transaction and applies its effects. Also the bulk preload's way in. */
  commit(transaction: TransactionToCommit): TransactionUpdate {
    return this.store.append((offset): TransactionUpdate => {
      this.index.applyTransaction(
        transaction.nodes,
        offset,
        transaction.workflowId,
        transaction.synchronizerId,
      );
      return {
        kind: "transaction",
        offset,
        updateId: fingerprintOf(`sandbox-transaction:${this.contractIds.next()}`),
        recordTime: transaction.effectiveAt,
        ...transaction,
      };
    });
  }
}
