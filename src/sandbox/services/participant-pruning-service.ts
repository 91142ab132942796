import type { PruneRequest__Output, PruneResponse } from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";

/**
 * ParticipantPruningService (admin gRPC only: the JSON API has no prune endpoint). Prunes the
 * history up to an offset inclusive; reads starting at or below it fail from then on with
 * PARTICIPANT_PRUNED_DATA_ACCESSED, while the active contracts stay.
 */
export function participantPruningService(store: SandboxStore): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.admin.ParticipantPruningService",
    unary: {
      Prune: async (request: PruneRequest__Output, context: CallContext): Promise<PruneResponse> => {
        await context.authorize({ kind: "admin" });
        const upTo = Number(request.pruneUpTo);
        if (upTo <= 0) throw ledgerErrors.nonPositiveOffset("prune_up_to", upTo);
        const ledgerEnd = store.ledgerEnd();
        // Canton refuses to prune what it has not yet seen as safe: at most the ledger end.
        if (upTo > ledgerEnd) throw ledgerErrors.offsetAfterLedgerEnd("Prune up to", upTo, ledgerEnd);
        store.prune(upTo);
        return {};
      },
    },
  };
}
