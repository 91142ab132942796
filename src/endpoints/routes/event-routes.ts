import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

export function eventRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/events/events-by-contract-id",
      summary: "The create and archive events of a contract",
      tag: "Events",
      service: "EventQueryService",
      rpc: "GetEventsByContractId",
      body: { kind: "json", schema: "GetEventsByContractIdRequest" },
      responseSchema: "JsGetEventsByContractIdResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/contracts/contract-by-id",
      summary: "A contract by its id (experimental)",
      tag: "Contracts",
      service: "ContractService",
      rpc: "GetContract",
      body: { kind: "json", schema: "GetContractRequest" },
      responseSchema: "GetContractResponse",
    }),
  ];
}
