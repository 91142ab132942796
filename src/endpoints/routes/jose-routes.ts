import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

/**
 * JoseService (Canton 3.6 on, alpha): a party's public keys as a JWKS. The participant gives each
 * key as JSON text; the JSON API answers them as JSON objects (Canton's JsJoseService).
 */
export function joseRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/jose/jwks/synchronizer/{synchronizer}/party/{party}",
      // Canton names it so rather than after its path.
      operationId: "getV2JoseJwks",
      summary: "A party's public signing keys on a synchronizer as a JWKS (RFC 7517), for party JWTs",
      tag: "Jose",
      service: "JoseService",
      rpc: "GetJwks",
      pathParams: [
        { name: "synchronizer", type: "string" },
        { name: "party", type: "string" },
      ],
      responseSchema: "GetJwksResponse",
      availability: { since: "3.6.0" },
      toRequest: ({ path }) => ({ synchronizerId: path.synchronizer, partyId: path.party }),
      toAnswer: (json) => ({
        keys: ((json as { keys?: string[] }).keys ?? []).map((key) => JSON.parse(key) as unknown),
      }),
    }),
  ];
}
