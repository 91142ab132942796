import type { GetJwksRequest__Output, GetJwksResponse } from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { partyStringError, uniqueIdentifierError } from "../identifiers.js";
import type { ExternalParties } from "../interactive/external-parties.js";
import { jwkOf } from "../interactive/party-jwks.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";

/**
 * JoseService (Canton 3.6 on, alpha): an external party's protocol signing keys on a synchronizer
 * as JWKs, for anyone who verifies JWTs the party signs itself. Any authenticated caller may ask
 * (Canton's RequiredClaim.Public). Only external parties have signing keys of their own; a local
 * party, an unknown one, or one not hosted on the synchronizer has none there.
 */
export function joseService(store: SandboxStore, externalParties: ExternalParties): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.JoseService",
    unary: {
      GetJwks: async (request: GetJwksRequest__Output, context: CallContext): Promise<GetJwksResponse> => {
        await context.authorize({ kind: "authenticated" });
        const synchronizerError = uniqueIdentifierError(request.synchronizerId);
        if (synchronizerError !== undefined)
          throw errors.invalidArgument(`synchronizerId: ${synchronizerError}`);
        const partyError = partyStringError(request.partyId) ?? uniqueIdentifierError(request.partyId);
        if (partyError !== undefined) throw errors.invalidArgument(`partyId: ${partyError}`);
        if (!store.synchronizers.some((s) => s.id === request.synchronizerId))
          throw ledgerErrors.synchronizerNotFound(request.synchronizerId);
        const keys = externalParties.keysOf(request.partyId);
        const hosted = store.party(request.partyId)?.permissions.has(request.synchronizerId) === true;
        if (keys === undefined || !hosted) throw ledgerErrors.partySigningKeysNotFound(request.partyId);
        return {
          keys: keys.keys.flatMap((key) => {
            const jwk = jwkOf(key);
            return jwk === undefined ? [] : [JSON.stringify(jwk)];
          }),
        };
      },
    },
  };
}
