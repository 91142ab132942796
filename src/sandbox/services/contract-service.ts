import type { GetContractRequest__Output } from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";

/**
 * ContractService.GetContract (experimental in 3.5): a contract's payload by id, active or not,
 * for querying parties among its stakeholders (any, when none are given). As on Canton, offset,
 * node id and acsDelta carry placeholders and interface views are not computed; the blob is set.
 */
export function contractService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.ContractService",
    unary: {
      GetContract: async (request: GetContractRequest__Output, context) => {
        if (request.contractId === "") throw errors.missingField("contract_id");
        await context.authorize(
          request.queryingParties.length === 0
            ? { kind: "read-as-any-party" }
            : { kind: "read-as", parties: request.queryingParties },
        );
        const contract = runtime.ledger.contract(request.contractId);
        const querying = new Set(request.queryingParties);
        const witnesses =
          contract === undefined
            ? []
            : [...contract.stakeholders].filter((p) => querying.size === 0 || querying.has(p));
        if (contract === undefined || witnesses.length === 0)
          throw ledgerErrors.contractPayloadNotFound(request.contractId);
        const createdEvent = runtime.events.created(contract, {
          offset: 1,
          nodeId: 0,
          selection: { witnesses, includeBlob: true, interfaces: [] },
          verbose: false,
          acsDelta: false,
        });
        return { createdEvent };
      },
    },
  };
}
