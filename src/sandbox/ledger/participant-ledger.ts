import { createHash, randomBytes } from "node:crypto";
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
import type { ValidatedReassignment } from "./commands/reassignment-validation.js";
import { inFlight, routeTransaction } from "./commands/synchronizer-routing.js";
import { ledgerErrors } from "./ledger-errors.js";
import type {
  ReassignmentStep,
  ReassignmentUpdate,
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
  /** Unassignments by reassignment id, until their assignment. */
  private readonly pendingAssignments = new Map<string, ReassignmentStep>();
  private readonly completedAssignments = new Set<string>();
  private indexedUpdates = 0;

  constructor(
    readonly store: SandboxStore,
    readonly registry: ModelRegistry,
    blobSecret: Buffer = randomBytes(32),
  ) {
    this.engine = new CommandEngine(registry, this.contractIds);
    this.blobCodec = new ContractBlobCodec(blobSecret);
  }

  /** The synchronizer the sandbox prefers (the first): where it records what has no other. */
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
    const synchronizerId = routeTransaction(
      this.store,
      commands.synchronizerId,
      interpreted.nodes,
      commands.actAs,
    );
    const update = this.commit(
      interpreted.nodes,
      interpreted.transient,
      effectiveAt,
      commands.workflowId,
      completion,
      synchronizerId,
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
    synchronizerId: string,
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
      return {
        kind: "transaction",
        offset,
        updateId: fingerprintOf(`sandbox-transaction:${this.contractIds.next()}`),
        workflowId,
        effectiveAt,
        recordTime: effectiveAt,
        synchronizerId,
        nodes,
        completion,
        transient,
        ...(externalTransactionHash === undefined ? {} : { externalTransactionHash }),
      };
    });
  }

  /**
   * Unassigns contracts from their source synchronizer, or assigns unassigned ones to their
   * target, as one reassignment at the next offset. Errors are Canton's reassignment
   * submission errors (INVALID_ARGUMENT with the processor's message) and leave no trace.
   */
  reassign(request: ValidatedReassignment): ReassignmentUpdate {
    for (const id of [request.source, request.target]) {
      if (!this.store.isConnectedTo(id)) {
        throw errors.invalidArgument(`Unable to resolve ${id} to a connected physical synchronizer id`);
      }
    }
    const steps = request.kind === "unassign" ? this.unassignments(request) : this.assignments(request);
    const update = this.store.append(
      (offset): ReassignmentUpdate => ({
        kind: "reassignment",
        offset,
        updateId: fingerprintOf(`sandbox-reassignment:${offset}:${this.contractIds.next()}`),
        workflowId: request.workflowId,
        recordTime: new Date(),
        synchronizerId: request.kind === "unassign" ? request.source : request.target,
        steps: steps.map((step, nodeId) => ({
          ...step,
          nodeId,
          reassignmentId: step.reassignmentId || reassignmentIdOf(request.source, offset),
        })),
        completion: {
          commandId: request.commandId,
          userId: request.userId,
          actAs: [request.submitter],
          submissionId: request.submissionId,
          deduplication: { kind: "none" },
        },
      }),
    );
    for (const step of update.steps) {
      step.contract.reassignments.push(update);
      if (step.kind === "unassigned") {
        this.pendingAssignments.set(step.reassignmentId, step);
      } else {
        step.contract.synchronizerId = step.target;
        this.pendingAssignments.delete(step.reassignmentId);
        this.completedAssignments.add(step.reassignmentId);
      }
    }
    return update;
  }

  private unassignments(request: ValidatedReassignment): Omit<ReassignmentStep, "nodeId">[] {
    const { source, target, submitter } = request;
    if (source === target) {
      throw errors.invalidArgument(
        `Cannot unassign contracts \`${request.ids.join(", ")}\`: source and target synchronizers are the same`,
      );
    }
    return request.ids.map((contractId) => {
      const contract = this.contracts.get(contractId);
      // Canton looks the contract up on the source synchronizer only.
      if (contract === undefined || (contract.synchronizerId !== source && !inFlight(contract))) {
        throw errors.invalidArgument(`Cannot unassign contract \`${contractId}\`: unknown contract`);
      }
      if (contract.archivedOffset !== undefined || inFlight(contract)) {
        const status = contract.archivedOffset !== undefined ? "Archived" : "ReassignedAway";
        throw errors.invalidArgument(
          `Cannot unassign contract \`${contractId}\` because it's not active. Current status ${status}`,
        );
      }
      this.checkStakeholders(contract, submitter, target, contractId);
      return {
        kind: "unassigned",
        reassignmentId: "",
        contract,
        source,
        target,
        submitter,
        reassignmentCounter: counterOf(contract) + 1,
      };
    });
  }

  private assignments(request: ValidatedReassignment): Omit<ReassignmentStep, "nodeId">[] {
    return request.ids.map((reassignmentId) => {
      if (this.completedAssignments.has(reassignmentId)) {
        throw errors.invalidArgument(`Cannot assign \`${reassignmentId}\`: assignment has been completed`);
      }
      const unassigned = this.pendingAssignments.get(reassignmentId);
      if (
        unassigned === undefined ||
        unassigned.source !== request.source ||
        unassigned.target !== request.target
      ) {
        throw errors.invalidArgument(`Cannot assign \`${reassignmentId}\`: unassignment data not found`);
      }
      this.checkStakeholders(unassigned.contract, request.submitter, request.target, reassignmentId);
      return { ...unassigned, kind: "assigned", submitter: request.submitter };
    });
  }

  /** Only a stakeholder may reassign, and every stakeholder this participant knows must be on the target. */
  private checkStakeholders(contract: StoredContract, submitter: string, target: string, reference: string) {
    if (!contract.stakeholders.has(submitter)) {
      throw errors.invalidArgument(`For \`${reference}\`: submitter \`${submitter}\` is not a stakeholder.`);
    }
    const missing = [...contract.stakeholders].filter(
      (p) => this.store.party(p) !== undefined && !this.store.hosts(p, target),
    );
    if (missing.length > 0) {
      throw errors.invalidArgument(
        `The following stakeholders are not active on the target synchronizer: Set(${missing.join(", ")})`,
      );
    }
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
      synchronizerId: "",
      reassignments: [],
    };
  }
}

/** The contract's reassignment counter: 0 until its first unassignment. */
function counterOf(contract: StoredContract, atOffset = Number.POSITIVE_INFINITY): number {
  let counter = 0;
  for (const update of contract.reassignments) {
    if (update.offset > atOffset) break;
    counter = update.steps.find((s) => s.contract === contract)!.reassignmentCounter;
  }
  return counter;
}

/** Canton's reassignment ids are hex strings; the sandbox derives one from source and offset. */
function reassignmentIdOf(source: string, offset: number): string {
  return `00${createHash("sha256").update(`${source}:${offset}`).digest("hex")}`;
}
