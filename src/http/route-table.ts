import type { WsChannelDoc } from "../docs/asyncapi-document.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import type { StreamEndpoint } from "../ws/stream-endpoint.js";
import type { SchemaComponents } from "./body-validator.js";
import type { RouteDeps } from "./grpc-route.js";
import { type ListTwinConfig, listTwinRoute } from "./list-twin.js";
import type { Route } from "./route.js";
import { commandRoutes } from "./routes/command-routes.js";
import { docsRoutes } from "./routes/docs-routes.js";
import { eventRoutes } from "./routes/event-routes.js";
import { idpRoutes } from "./routes/idp-routes.js";
import { interactiveRoutes } from "./routes/interactive-routes.js";
import { packageRoutes } from "./routes/package-routes.js";
import { partyRoutes } from "./routes/party-routes.js";
import { probeRoutes } from "./routes/probe-routes.js";
import { stateRoutes } from "./routes/state-routes.js";
import { updateRoutes } from "./routes/update-routes.js";
import { userRoutes } from "./routes/user-routes.js";
import { versionRoutes } from "./routes/version-routes.js";

export interface RouteTableOptions {
  deps: RouteDeps;
  metrics: GatewayMetrics | undefined;
  components: SchemaComponents;
  wsChannels: readonly WsChannelDoc[];
  pathPrefix: string;
  /** Stream endpoints: each gets its HTTP list twin here (and a WebSocket in src/ws). */
  streamEndpoints?: readonly StreamEndpoint[];
  listTwin?: ListTwinConfig;
}

/** Every HTTP endpoint of the gateway, in one list. */
export function routeTable(options: RouteTableOptions): Route[] {
  const { deps } = options;
  const routes: Route[] = [
    ...probeRoutes(deps.ledger, options.metrics),
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
  ];
  if (options.listTwin !== undefined) {
    const config = options.listTwin;
    for (const endpoint of options.streamEndpoints ?? [])
      routes.push(listTwinRoute(endpoint, config, options.metrics));
  }
  routes.push(...docsRoutes(() => routes, options.wsChannels, options.components, options.pathPrefix));
  return routes;
}
