import type { GetEventsByContractIdRequest__Output } from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { createdOn } from "../ledger/reads/active-contracts.js";
import { CompiledEventFormat } from "../ledger/reads/event-format.js";

/**
 * EventQueryService.GetEventsByContractId: the create and (if any) the archive of a contract in
 * ACS_DELTA presentation, for readers among its stakeholders; CONTRACT_EVENTS_NOT_FOUND otherwise.
 */
export function eventQueryService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.EventQueryService",
    unary: {
      GetEventsByContractId: async (request: GetEventsByContractIdRequest__Output, context) => {
        if (request.contractId === "") throw errors.missingField("contract_id");
        const format = CompiledEventFormat.compile(runtime.registry, request.eventFormat, "event_format");
        await context.authorize(format.requirement());
        const contract = runtime.ledger.contract(request.contractId);
        const selection = contract && format.select(contract.templateId, contract.stakeholders);
        if (contract === undefined || selection === undefined)
          throw ledgerErrors.contractEventsNotFound(request.contractId);
        const createdEvent = runtime.events.created(contract, {
          offset: contract.createdOffset,
          nodeId: contract.createdNodeId,
          selection,
          verbose: format.verbose,
          acsDelta: true,
        });
        const archived =
          contract.archivedOffset === undefined
            ? null
            : {
                archivedEvent: runtime.events.archived(contract, {
                  offset: contract.archivedOffset,
                  nodeId: contract.archivedNodeId ?? 0,
                  selection,
                }),
                synchronizerId: contract.synchronizerId,
              };
        return { created: { createdEvent, synchronizerId: createdOn(contract) }, archived };
      },
    },
  };
}
