import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { partyStringError, uniqueIdentifierError } from "../identifiers.js";
import type { ConnectedSynchronizer, GetConnectedSynchronizersRequest } from "../ledger-api-messages.js";
import type { SandboxStore } from "../sandbox-store.js";

/**
 * StateService: ledger end, pruning state and connected synchronizers. The active contract
 * snapshot methods come with the contract store; until then they answer UNIMPLEMENTED.
 */
export function stateService(store: SandboxStore): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.StateService",
    unary: {
      GetLedgerEnd: async (_request: object, context: CallContext) => {
        await context.authorize({ kind: "authenticated" });
        return { offset: store.ledgerEnd() };
      },
      GetLatestPrunedOffsets: async (_request: object, context: CallContext) => {
        await context.authorize({ kind: "authenticated" });
        return {
          participantPrunedUpToInclusive: store.latestPrunedOffset(),
          allDivulgedContractsPrunedUpToInclusive: store.latestPrunedOffset(),
        };
      },
      GetConnectedSynchronizers: async (request: GetConnectedSynchronizersRequest, context: CallContext) => {
        // Canton: public without a party; with one, admin, idp admin or any right on the party.
        await context.authorize(
          request.party === ""
            ? { kind: "authenticated" }
            : {
                kind: "admin-or-operate-as",
                parties: [request.party],
                identityProviderId: request.identityProviderId,
              },
        );
        return { connectedSynchronizers: connectedSynchronizers(store, request) };
      },
    },
  };
}

function connectedSynchronizers(
  store: SandboxStore,
  request: GetConnectedSynchronizersRequest,
): ConnectedSynchronizer[] {
  const { party, participantId } = request;
  if (party !== "") {
    const error = partyStringError(party);
    if (error !== undefined) throw errors.invalidField("party", error);
  }
  if (participantId !== "") {
    // Canton parses it as the participant member `PAR::<uid>`.
    const error = uniqueIdentifierError(participantId);
    if (error !== undefined) throw errors.invalidField("participant_id", error);
  }
  const hostedHere = participantId === "" || participantId === store.participant.participantId;
  return store.synchronizers.flatMap((synchronizer) => {
    if (party === "") {
      return [
        {
          synchronizerAlias: synchronizer.alias,
          synchronizerId: synchronizer.id,
          permission: "PARTICIPANT_PERMISSION_UNSPECIFIED",
        },
      ];
    }
    // The sandbox knows no other participant's hostings: a party hosted elsewhere yields nothing.
    const permission = hostedHere ? store.party(party)?.permissions.get(synchronizer.id) : undefined;
    return permission === undefined
      ? []
      : [{ synchronizerAlias: synchronizer.alias, synchronizerId: synchronizer.id, permission }];
  });
}
