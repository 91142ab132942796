import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

export function stateRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/state/ledger-end",
      summary: "The offset of the participant's ledger end",
      tag: "State",
      service: "StateService",
      rpc: "GetLedgerEnd",
      responseSchema: "GetLedgerEndResponse",
      toRequest: () => ({}),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/state/latest-pruned-offsets",
      summary: "The offsets up to which the participant has pruned",
      tag: "State",
      service: "StateService",
      rpc: "GetLatestPrunedOffsets",
      responseSchema: "GetLatestPrunedOffsetsResponse",
      toRequest: () => ({}),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/state/connected-synchronizers",
      summary: "The synchronizers the participant is connected to, optionally for one party",
      tag: "State",
      service: "StateService",
      rpc: "GetConnectedSynchronizers",
      query: [
        { name: "party", type: "string" },
        { name: "participantId", type: "string" },
        { name: "identityProviderId", type: "string" },
      ],
      responseSchema: "GetConnectedSynchronizersResponse",
      toRequest: ({ query }) => ({
        party: query.party ?? "",
        participantId: query.participantId ?? "",
        identityProviderId: query.identityProviderId ?? "",
      }),
    }),
    ...(["GET", "POST"] as const).map((method) =>
      // 3.5.4 takes the page request as the body of a GET; 3.5.10 documents POST and deprecates
      // the GET: both work.
      grpcRoute(deps, {
        method,
        path: "/v2/state/active-contracts-page",
        summary:
          method === "GET"
            ? "One page of the active contract set at an offset (deprecated: use the POST)"
            : "One page of the active contract set at an offset",
        tag: "State",
        availability: method === "GET" ? { deprecatedSince: "3.5.10" } : { since: "3.5.10" },
        service: "StateService",
        rpc: "GetActiveContractsPage",
        body: { kind: "json", schema: "GetActiveContractsPageRequest" },
        responseSchema: "JsGetActiveContractsPageResponse",
        pages: { items: "activeContracts", itemSchema: "JsGetActiveContractsResponse" },
      }),
    ),
  ];
}
