import { createHash } from "node:crypto";
import { errors } from "../errors.js";
import { fingerprintOf } from "../identifiers.js";
import type { ContractIdAllocator } from "./commands/contract-ids.js";
import type { ValidatedReassignment } from "./commands/reassignment-validation.js";
import { inFlight } from "./commands/synchronizer-routing.js";
import type { LedgerIndex } from "./ledger-index.js";
import type { ReassignmentStep, ReassignmentUpdate, StoredContract } from "./ledger-records.js";
import type { SandboxStore } from "./sandbox-store.js";

type UnnumberedStep = Omit<ReassignmentStep, "nodeId">;

/**
 * Moves contracts between synchronizers in Canton's two halves: an unassignment from the
 * source, then an assignment of that reassignment id to the target, each as one reassignment
 * update at the next offset. Errors are Canton's reassignment submission errors
 * (INVALID_ARGUMENT with the processor's message) and leave no trace.
 */
export class Reassignments {
  /** Unassignments by reassignment id, until their assignment. */
  private readonly pending = new Map<string, ReassignmentStep>();
  private readonly completed = new Set<string>();

  constructor(
    private readonly store: SandboxStore,
    private readonly index: LedgerIndex,
    private readonly contractIds: ContractIdAllocator,
  ) {}

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
        this.pending.set(step.reassignmentId, step);
      } else {
        step.contract.synchronizerId = step.target;
        this.pending.delete(step.reassignmentId);
        this.completed.add(step.reassignmentId);
      }
    }
    return update;
  }

  /** Steps without their reassignment id: it is derived from the offset the update gets. */
  private unassignments(request: ValidatedReassignment): UnnumberedStep[] {
    const { source, target, submitter } = request;
    if (source === target) {
      throw errors.invalidArgument(
        `Cannot unassign contracts \`${request.ids.join(", ")}\`: source and target synchronizers are the same`,
      );
    }
    return request.ids.map((contractId) => {
      const contract = this.index.contract(contractId);
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

  private assignments(request: ValidatedReassignment): UnnumberedStep[] {
    return request.ids.map((reassignmentId) => {
      if (this.completed.has(reassignmentId)) {
        throw errors.invalidArgument(`Cannot assign \`${reassignmentId}\`: assignment has been completed`);
      }
      const unassigned = this.pending.get(reassignmentId);
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
}

/** The contract's reassignment counter: 0 until its first unassignment. */
function counterOf(contract: StoredContract): number {
  const last = contract.reassignments.at(-1);
  return last === undefined ? 0 : last.steps.find((s) => s.contract === contract)!.reassignmentCounter;
}

/** Canton's reassignment ids are hex strings; the sandbox derives one from source and offset. */
function reassignmentIdOf(source: string, offset: number): string {
  return `00${createHash("sha256").update(`${source}:${offset}`).digest("hex")}`;
}
