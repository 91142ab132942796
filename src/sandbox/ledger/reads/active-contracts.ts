import type { StoredContract } from "../ledger-records.js";
import type { ParticipantLedger } from "../participant-ledger.js";
import type { CompiledEventFormat } from "./event-format.js";
import type { EventRenderer } from "./event-renderer.js";

export interface ActiveContractEntry {
  readonly contract: StoredContract;
  /** GetActiveContractsResponse without its continuation token. */
  readonly response: {
    workflowId: string;
    activeContract: { createdEvent: object; synchronizerId: string; reassignmentCounter: number };
  };
}

/**
 * The active contracts at `activeAtOffset` a reader may see (a requested party among the
 * stakeholders, with a matching filter), in creation order, from creation index `fromSequence`.
 * Events are in ACS_DELTA shape, as their creating transaction showed them.
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
    const createdEvent = renderer.created(contract, {
      offset: contract.createdOffset,
      nodeId: contract.createdNodeId,
      selection,
      verbose: format.verbose,
      acsDelta: true,
    });
    yield {
      contract,
      response: {
        workflowId: contract.createdWorkflowId,
        activeContract: { createdEvent, synchronizerId: ledger.synchronizerId, reassignmentCounter: 0 },
      },
    };
  }
}
