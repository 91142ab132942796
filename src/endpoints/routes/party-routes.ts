import { invalidArgumentError } from "../../errors/index.js";
import type { UpdatePartyDetailsRequest } from "../../proto/ledger-api-types.js";
import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "admin.PartyManagementService";

export function partyRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/parties",
      summary: "The parties known to the participant",
      tag: "Parties",
      service: SERVICE,
      rpc: "ListKnownParties",
      query: [
        { name: "identity-provider-id", type: "string" },
        { name: "filter-party", type: "string" },
        { name: "pageSize", type: "int32" },
        { name: "pageToken", type: "string" },
      ],
      responseSchema: "ListKnownPartiesResponse",
      pages: { items: "partyDetails", itemSchema: "PartyDetails" },
      toRequest: ({ query }) => ({
        identityProviderId: query["identity-provider-id"] ?? "",
        filterParty: query["filter-party"] ?? "",
        pageSize: query.pageSize ?? 0,
        pageToken: query.pageToken ?? "",
      }),
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/parties",
      summary: "Allocate a party on the participant",
      tag: "Parties",
      service: SERVICE,
      rpc: "AllocateParty",
      body: { kind: "json", schema: "AllocatePartyRequest" },
      responseSchema: "AllocatePartyResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/parties/external/generate-topology",
      summary:
        "The topology transactions (and their multi-hash) that onboard an external party holding the given key",
      tag: "Parties",
      service: SERVICE,
      rpc: "GenerateExternalPartyTopology",
      body: { kind: "json", schema: "GenerateExternalPartyTopologyRequest" },
      responseSchema: "GenerateExternalPartyTopologyResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/parties/external/allocate",
      summary: "Allocate an external party from its signed onboarding topology transactions",
      tag: "Parties",
      service: SERVICE,
      rpc: "AllocateExternalParty",
      body: { kind: "json", schema: "AllocateExternalPartyRequest" },
      responseSchema: "AllocateExternalPartyResponse",
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/parties/participant-id",
      summary: "The participant's identifier",
      tag: "Parties",
      service: SERVICE,
      rpc: "GetParticipantId",
      responseSchema: "GetParticipantIdResponse",
      toRequest: () => ({}),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/parties/{party}",
      summary: "Details of the given parties that are known to the participant",
      tag: "Parties",
      service: SERVICE,
      rpc: "GetParties",
      pathParams: [{ name: "party", type: "string" }],
      query: [
        { name: "identity-provider-id", type: "string" },
        { name: "parties", type: "string[]" },
      ],
      responseSchema: "GetPartiesResponse",
      toRequest: ({ path, query }) => ({
        parties: [path.party, ...((query.parties as string[] | undefined) ?? [])],
        identityProviderId: query["identity-provider-id"] ?? "",
      }),
    }),
    grpcRoute<UpdatePartyDetailsRequest>(deps, {
      method: "PATCH",
      path: "/v2/parties/{party}",
      summary: "Update the participant-local details of a party",
      tag: "Parties",
      service: SERVICE,
      rpc: "UpdatePartyDetails",
      pathParams: [{ name: "party", type: "string" }],
      body: { kind: "json", schema: "UpdatePartyDetailsRequest" },
      responseSchema: "UpdatePartyDetailsResponse",
      toRequest: async ({ path, body }, fromJson) => {
        const request = await fromJson(body);
        // As Canton: the party in the path must be the one the body updates.
        if (request.partyDetails?.party !== path.party) {
          throw invalidArgumentError(
            `${path.party} does not match party in body ${request.partyDetails?.party ?? "(none)"}`,
          );
        }
        return request;
      },
    }),
  ];
}
