import { randomBytes } from "node:crypto";
import type { ModelRegistry } from "../models/model-registry.js";
import type { ErrorOrigin } from "../sandbox-error.js";
import {
  CommandSubmitter,
  type Interpretation,
  type SubmissionOutcome,
  type TransactionToCommit,
} from "./command-submitter.js";
import type { InterpretedTransaction } from "./commands/command-engine.js";
import type { ValidatedCommands } from "./commands/command-validation.js";
import { ContractIdAllocator } from "./commands/contract-ids.js";
import type { ValidatedReassignment } from "./commands/reassignment-validation.js";
import { ContractDisclosure } from "./contract-disclosure.js";
import { LedgerIndex } from "./ledger-index.js";
import type { ReassignmentUpdate, StoredContract, TransactionUpdate } from "./ledger-records.js";
import { Reassignments } from "./reassignments.js";
import type { LedgerUpdate, SandboxStore } from "./sandbox-store.js";

/**
 * The participant's ledger as the services see it: one object over the shared store, the index
 * of contracts and update ids (ledger-index.ts), the command path (command-submitter.ts),
 * explicit disclosure (contract-disclosure.ts) and reassignments (reassignments.ts). The parts
 * share one contract id allocator, which also makes the update ids.
 */
export class ParticipantLedger {
  readonly contractIds = new ContractIdAllocator();
  private readonly index: LedgerIndex;
  private readonly disclosure: ContractDisclosure;
  private readonly submitter: CommandSubmitter;
  private readonly reassignments: Reassignments;

  constructor(
    readonly store: SandboxStore,
    readonly registry: ModelRegistry,
    blobSecret: Buffer = randomBytes(32),
  ) {
    this.index = new LedgerIndex(store);
    this.disclosure = new ContractDisclosure(blobSecret, registry, this.index);
    this.submitter = new CommandSubmitter(store, registry, this.contractIds, this.index, this.disclosure);
    this.reassignments = new Reassignments(store, this.index, this.contractIds);
  }

  /** A contract in any state (undefined when the participant never saw it). */
  contract(contractId: string): StoredContract | undefined {
    return this.index.contract(contractId);
  }

  /** Every contract this participant created, in creation order (the ACS is listed in it). */
  get contractsInCreationOrder(): readonly StoredContract[] {
    return this.index.contractsInCreationOrder;
  }

  /** Finds a transaction or topology update by its update id. */
  updateById(updateId: string): LedgerUpdate | undefined {
    return this.index.updateById(updateId);
  }

  createdEventBlob(contract: StoredContract): Buffer {
    return this.disclosure.createdEventBlob(contract);
  }

  submit(commands: ValidatedCommands, origin: ErrorOrigin): SubmissionOutcome {
    return this.submitter.submit(commands, origin);
  }

  /** Runs the commands against the ledger as it is now, without committing anything. */
  interpret(commands: ValidatedCommands, effectiveAt: Date): InterpretedTransaction {
    return this.submitter.interpret(commands, effectiveAt);
  }

  /** Finds the updates of an externally signed transaction by the hash its parties signed. */
  updatesByTransactionHash(hash: Buffer): LedgerUpdate[] {
    return this.index.updatesByTransactionHash(hash);
  }

  /**
   * Commits a transaction interpreted earlier (interactive submission's execute), deduplicated;
   * `transactionHash`, the hash its parties signed, is recorded for the lookups by hash (3.6 on).
   */
  submitInterpreted(
    commands: ValidatedCommands,
    origin: ErrorOrigin,
    interpret: () => Interpretation,
    transactionHash?: Buffer,
  ): SubmissionOutcome {
    return this.submitter.submitInterpreted(commands, origin, interpret, transactionHash);
  }

  /** Commits a transaction without a command behind it: the bulk preload's way in. */
  commit(transaction: TransactionToCommit): TransactionUpdate {
    return this.submitter.commit(transaction);
  }

  reassign(request: ValidatedReassignment): ReassignmentUpdate {
    return this.reassignments.reassign(request);
  }
}
