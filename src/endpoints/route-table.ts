import type { Route } from "./route.js";
import type { RouteDeps } from "./route-deps.js";
import { commandRoutes } from "./routes/command-routes.js";
import { eventRoutes } from "./routes/event-routes.js";
import { idpRoutes } from "./routes/idp-routes.js";
import { interactiveRoutes } from "./routes/interactive-routes.js";
import { joseRoutes } from "./routes/jose-routes.js";
import { packageRoutes } from "./routes/package-routes.js";
import { partyRoutes } from "./routes/party-routes.js";
import { stateRoutes } from "./routes/state-routes.js";
import { updateRoutes } from "./routes/update-routes.js";
import { userRoutes } from "./routes/user-routes.js";
import { versionRoutes } from "./routes/version-routes.js";

/**
 * The request/response endpoints of the JSON Ledger API, in one list. The stream endpoints are
 * in ledger-streams.ts; probes, metrics, docs and list twins are added where the gateway is wired.
 */
export function ledgerApiRoutes(deps: RouteDeps): Route[] {
  return [
    ...versionRoutes(deps),
    ...stateRoutes(deps),
    ...partyRoutes(deps),
    ...userRoutes(deps),
    ...idpRoutes(deps),
    ...packageRoutes(deps),
    ...interactiveRoutes(deps),
    ...commandRoutes(deps),
    ...updateRoutes(deps),
    ...eventRoutes(deps),
    ...joseRoutes(deps),
  ];
}
