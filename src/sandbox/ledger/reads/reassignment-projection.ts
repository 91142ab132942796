import { identifier, timestamp } from "../../protocol-values.js";
import type { ReassignmentStep, ReassignmentUpdate } from "../ledger-records.js";
import type { CompiledEventFormat, EventSelection } from "./event-format.js";
import type { EventRenderer } from "./event-renderer.js";

/**
 * A reassignment as one reader sees it (Ledger API `Reassignment`): the events of contracts
 * whose stakeholders include a requested party with a matching filter, or undefined when none
 * is. An assigned event carries the contract's created event at the assignment's offset.
 */
export function projectReassignment(
  update: ReassignmentUpdate,
  format: CompiledEventFormat,
  renderer: EventRenderer,
): object | undefined {
  const events: object[] = [];
  for (const step of update.steps) {
    const selection = format.select(step.contract.templateId, step.contract.stakeholders);
    if (selection === undefined) continue;
    events.push(
      step.kind === "unassigned"
        ? { unassigned: unassignedEvent(step, update.offset, selection) }
        : { assigned: assignedEvent(step, update.offset, selection, format, renderer) },
    );
  }
  if (events.length === 0) return undefined;
  return {
    updateId: update.updateId,
    commandId: format.readsAsAnyOf(update.completion.actAs) ? update.completion.commandId : "",
    workflowId: update.workflowId,
    offset: update.offset,
    events,
    traceContext: null,
    recordTime: timestamp(update.recordTime),
    synchronizerId: update.synchronizerId,
  };
}

export function unassignedEvent(step: ReassignmentStep, offset: number, selection: EventSelection) {
  const contract = step.contract;
  return {
    reassignmentId: step.reassignmentId,
    contractId: contract.contractId,
    templateId: identifier(contract.templateId),
    source: step.source,
    target: step.target,
    submitter: step.submitter,
    reassignmentCounter: step.reassignmentCounter,
    // The sandbox has no exclusivity timeout: any stakeholder may assign at once.
    assignmentExclusivity: null,
    witnessParties: selection.witnesses,
    packageName: contract.packageName,
    offset,
    nodeId: step.nodeId,
  };
}

function assignedEvent(
  step: ReassignmentStep,
  offset: number,
  selection: EventSelection,
  format: CompiledEventFormat,
  renderer: EventRenderer,
) {
  return {
    source: step.source,
    target: step.target,
    reassignmentId: step.reassignmentId,
    submitter: step.submitter,
    reassignmentCounter: step.reassignmentCounter,
    createdEvent: renderer.created(step.contract, {
      offset,
      nodeId: step.nodeId,
      selection,
      verbose: format.verbose,
      acsDelta: true,
    }),
  };
}
