import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

export function versionRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/version",
      summary: "The version of the Ledger API and the features the participant supports",
      tag: "Version",
      service: "VersionService",
      rpc: "GetLedgerApiVersion",
      responseSchema: "GetLedgerApiVersionResponse",
      toRequest: () => ({}),
      // Canton serves GetLedgerApiVersion without a token, behind a verifying JSON API too.
      auth: "optional",
    }),
  ];
}
