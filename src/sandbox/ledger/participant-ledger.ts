import { randomBytes } from "node:crypto";
import { sameTypeCon, typeConKey } from "../../lf/index.js";
import { errors } from "../errors.js";
import { fingerprintOf } from "../identifiers.js";
import type { ModelRegistry } from "../models/model-registry.js";
import { rpcStatusOf } from "../sandbox-error.js";
import { CommandEngine, type InterpretedTransaction, type LedgerLookup } from "./commands/command-engine.js";
import type { ValidatedCommands } from "./commands/command-validation.js";
import { type BlobContents, ContractBlobCodec } from "./commands/contract-blob.js";
import { contractKeyHash } from "./commands/contract-factory.js";
import { ContractIdAllocator } from "./commands/contract-ids.js";
import { Deduplicator } from "./commands/deduplication.js";
import { ledgerErrors } from "./ledger-errors.js";
import type {
  RejectionUpdate,
  StoredContract,
  TransactionNode,
  TransactionUpdate,
} from "./ledger-records.js";
import type { LedgerUpdate, SandboxStore } from "./sandbox-store.js";

export type SubmissionOutcome =
  | { readonly kind: "accepted"; readonly update: TransactionUpdate }
  | { readonly kind: "rejected"; readonly update: RejectionUpdate; readonly error: unknown };

/** Where a submission came from, for the errors a rejection records. */
export interface SubmissionOrigin {
  readonly traceId: string;
  readonly participant: string;
}

/**
 * The participant's contract store and write path. A submission is deduplicated, interpreted by
 * the command engine and, when accepted, committed at the next offset of the shared store: the
 * created contracts become active, the consumed ones archived. A duplicate is recorded as a
 * rejection at its own offset (it shows in completions only). Interpretation errors are thrown
 * to the caller and leave no trace, as Canton's synchronous command errors.
 */
export class ParticipantLedger implements LedgerLookup {
  readonly contractIds = new ContractIdAllocator();
  private readonly engine: CommandEngine;
  private readonly blobCodec: ContractBlobCodec;
  private readonly blobs = new WeakMap<StoredContract, Buffer>();
  private readonly contracts = new Map<string, StoredContract>();
  private readonly keys = new Map<string, StoredContract>();
  /** Every contract this participant created, in creation order (the ACS is listed in it). */
  readonly contractsInCreationOrder: StoredContract[] = [];
  private readonly deduplicator = new Deduplicator();
  private readonly offsetsByUpdateId = new Map<string, number>();
  private indexedUpdates = 0;

  constructor(
    readonly store: SandboxStore,
    readonly registry: ModelRegistry,
    blobSecret: Buffer = randomBytes(32),
  ) {
    this.engine = new CommandEngine(registry, this.contractIds);
    this.blobCodec = new ContractBlobCodec(blobSecret);
  }

  get synchronizerId(): string {
    return this.store.synchronizers[0]!.id;
  }

  contract(contractId: string): StoredContract | undefined {
    return this.contracts.get(contractId);
  }

  activeByKey(keyHash: string): StoredContract | undefined {
    return this.keys.get(keyHash);
  }

  /** Finds a transaction or topology update by its update id. */
  updateById(updateId: string): LedgerUpdate | undefined {
    const updates = this.store.updates;
    for (; this.indexedUpdates < updates.length; this.indexedUpdates++) {
      const update = updates[this.indexedUpdates]!;
      if (update.kind !== "rejection") this.offsetsByUpdateId.set(update.updateId, update.offset);
    }
    const offset = this.offsetsByUpdateId.get(updateId);
    return offset === undefined ? undefined : this.store.updateAt(offset);
  }

  createdEventBlob(contract: StoredContract): Buffer {
    let blob = this.blobs.get(contract);
    if (blob === undefined) {
      blob = this.blobCodec.encode({
        templateId: contract.templateId,
        contractId: contract.contractId,
        packageName: contract.packageName,
        argument: contract.argument,
        signatories: contract.signatories,
        observers: contract.observers,
        key: contract.key?.json,
        createdAt: contract.createdAt.toISOString(),
      });
      this.blobs.set(contract, blob);
    }
    return blob;
  }

  submit(commands: ValidatedCommands, origin: SubmissionOrigin): SubmissionOutcome {
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
        disclosed: this.disclosedContracts(commands),
        effectiveAt,
      },
      this,
    );
  }

  /**
   * Deduplicates a change and commits the transaction `interpret` gives (called only for a
   * change that is not a duplicate): the command path, and interactive submission's execution
   * of a transaction interpreted when it was prepared.
   */
  submitInterpreted(
    commands: ValidatedCommands,
    origin: SubmissionOrigin,
    interpret: () => {
      readonly interpreted: InterpretedTransaction;
      readonly effectiveAt: Date;
      readonly externalTransactionHash?: Buffer;
    },
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
          synchronizerId: this.synchronizerId,
          completion,
          status: rpcStatusOf(error, origin),
        }),
      );
      return { kind: "rejected", update, error };
    }
    const { interpreted, effectiveAt, externalTransactionHash } = interpret();
    const update = this.commit(
      interpreted.nodes,
      interpreted.transient,
      effectiveAt,
      commands.workflowId,
      completion,
      externalTransactionHash,
    );
    this.deduplicator.accept(changeId, {
      offset: update.offset,
      recordTime: now,
      submissionId: commands.submissionId,
    });
    return { kind: "accepted", update };
  }

  /**
   * Appends a transaction and applies its effects: creates become active (in node order),
   * consuming exercises archive their contract. Also the bulk preload's way in.
   */
  commit(
    nodes: readonly TransactionNode[],
    transient: ReadonlySet<string>,
    effectiveAt: Date,
    workflowId: string,
    completion: TransactionUpdate["completion"],
    externalTransactionHash?: Buffer,
  ): TransactionUpdate {
    return this.store.append((offset): TransactionUpdate => {
      for (const node of nodes) {
        const contract = node.contract;
        if (node.kind === "create") {
          contract.createdOffset = offset;
          contract.createdNodeId = node.nodeId;
          contract.createdWorkflowId = workflowId;
          contract.sequence = this.contractsInCreationOrder.length;
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
      return {
        kind: "transaction",
        offset,
        updateId: fingerprintOf(`sandbox-transaction:${this.contractIds.next()}`),
        workflowId,
        effectiveAt,
        recordTime: effectiveAt,
        synchronizerId: this.synchronizerId,
        nodes,
        completion,
        transient,
        ...(externalTransactionHash === undefined ? {} : { externalTransactionHash }),
      };
    });
  }

  /** Authenticates the disclosed contracts of a submission and checks the ids given beside them. */
  private disclosedContracts(commands: ValidatedCommands): ReadonlyMap<string, StoredContract> {
    const disclosed = new Map<string, StoredContract>();
    for (const given of commands.disclosedContracts) {
      if (given.createdEventBlob.length === 0)
        throw errors.missingField("disclosed_contracts.created_event_blob");
      const contents = this.blobCodec.decode(given.createdEventBlob);
      if (typeof contents === "string") throw ledgerErrors.disclosedContractAuthentication(contents);
      if (given.contractId !== "" && given.contractId !== contents.contractId) {
        throw ledgerErrors.disclosedContractAuthentication(
          `the contract id ${given.contractId} does not match the blob's ${contents.contractId}`,
        );
      }
      const templateId = given.templateId && this.registry.resolve(given.templateId);
      if (templateId && !sameTypeCon(templateId, contents.templateId)) {
        throw ledgerErrors.disclosedContractAuthentication(
          `the template id ${typeConKey(templateId)} does not match the blob's ${typeConKey(contents.templateId)}`,
        );
      }
      disclosed.set(contents.contractId, this.contracts.get(contents.contractId) ?? this.fromBlob(contents));
    }
    return disclosed;
  }

  /** A contract known only from its blob (created on another participant). */
  private fromBlob(contents: BlobContents): StoredContract {
    const codec = this.registry.codec;
    const key =
      contents.key === undefined
        ? undefined
        : {
            json: contents.key,
            value: codec.contractKey(contents.templateId).toValue(contents.key),
            hash: contractKeyHash(contents.templateId, contents.key),
            maintainers: this.registry.template(contents.templateId).key?.maintainers(contents.key) ?? [],
          };
    return {
      contractId: contents.contractId,
      templateId: contents.templateId,
      packageName: contents.packageName,
      argument: contents.argument,
      argumentValue: codec.templatePayload(contents.templateId).toValue(contents.argument),
      signatories: contents.signatories,
      observers: contents.observers,
      stakeholders: new Set([...contents.signatories, ...contents.observers]),
      key,
      createdAt: new Date(contents.createdAt),
      createdOffset: 0,
      createdNodeId: 0,
      createdWorkflowId: "",
      sequence: -1,
      archivedOffset: undefined,
      archivedNodeId: undefined,
    };
  }
}
