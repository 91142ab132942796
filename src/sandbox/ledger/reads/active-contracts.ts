import type { ReassignmentUpdate, StoredContract } from "../ledger-records.js";
import type { ParticipantLedger } from "../participant-ledger.js";
import type { CompiledEventFormat } from "./event-format.js";
import type { EventRenderer } from "./event-renderer.js";
import { unassignedEvent } from "./reassignment-projection.js";

export interface ActiveContractEntry {
  readonly contract: StoredContract;
  /** GetActiveContractsResponse without its continuation token. */
  readonly response:
    | {
        workflowId: string;
        activeContract: { createdEvent: object; synchronizerId: string; reassignmentCounter: number };
      }
    | { workflowId: string; incompleteUnassigned: { createdEvent: object; unassignedEvent: object } };
}

/**
 * The active contracts at `activeAtOffset` a reader may see (a requested party among the
 * stakeholders, with a matching filter), in creation order, from creation index `fromSequence`.
 * Events are in ACS_DELTA shape, as their creating transaction showed them. A contract
 * unassigned at that offset and not yet assigned is an IncompleteUnassigned entry; each entry
 * names the synchronizer and reassignment counter the contract had then. (IncompleteAssigned,
 * an assignment seen before its unassignment, needs a second participant: the sandbox has none.)
 */
export function* activeContracts(
  ledger: ParticipantLedger,
  renderer: EventRenderer,
  format: CompiledEventFormat,
  activeAtOffset: number,
  fromSequence: number,
): Generator<ActiveContractEntry> {
  const contracts = ledger.contractsInCreationOrder;
  for (let i = Math.max(0, fromSequence); i < contracts.length; i++) {
    const contract = contracts[i]!;
    if (contract.createdOffset > activeAtOffset) return;
    if (contract.archivedOffset !== undefined && contract.archivedOffset <= activeAtOffset) continue;
    const selection = format.select(contract.templateId, contract.stakeholders);
    if (selection === undefined) continue;
    const last = lastReassignment(contract, activeAtOffset);
    const step = last?.steps.find((s) => s.contract === contract);
    // The created event as its last activation (create or assignment) showed it, offset and node id included.
    const activation = lastAssignment(contract, activeAtOffset);
    const createdEvent = renderer.created(contract, {
      offset: activation?.offset ?? contract.createdOffset,
      nodeId: activation?.nodeId ?? contract.createdNodeId,
      selection,
      verbose: format.verbose,
      acsDelta: true,
    });
    if (last !== undefined && step?.kind === "unassigned") {
      yield {
        contract,
        response: {
          workflowId: last.workflowId,
          incompleteUnassigned: {
            createdEvent,
            unassignedEvent: unassignedEvent(step, last.offset, selection),
          },
        },
      };
      continue;
    }
    yield {
      contract,
      response: {
        workflowId: last?.workflowId ?? contract.createdWorkflowId,
        activeContract: {
          createdEvent,
          synchronizerId: step?.target ?? createdOn(contract),
          reassignmentCounter: step?.reassignmentCounter ?? 0,
        },
      },
    };
  }
}

function lastReassignment(contract: StoredContract, atOffset: number): ReassignmentUpdate | undefined {
  let last: ReassignmentUpdate | undefined;
  for (const update of contract.reassignments) {
    if (update.offset > atOffset) break;
    last = update;
  }
  return last;
}

function lastAssignment(
  contract: StoredContract,
  atOffset: number,
): { offset: number; nodeId: number } | undefined {
  let last: { offset: number; nodeId: number } | undefined;
  for (const update of contract.reassignments) {
    if (update.offset > atOffset) break;
    const step = update.steps.find((s) => s.contract === contract);
    if (step?.kind === "assigned") last = { offset: update.offset, nodeId: step.nodeId };
  }
  return last;
}

/** The synchronizer of the contract's create: its first unassignment's source, or where it is. */
export function createdOn(contract: StoredContract): string {
  const first = contract.reassignments[0]?.steps.find((s) => s.contract === contract);
  return first?.source ?? contract.synchronizerId;
}
