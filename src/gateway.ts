import uWS from "uWebSockets.js";
import type { Logger } from "pino";
import { ProtoJsonCodec } from "./codec/proto-json.js";
import type { GatewayConfig } from "./config/gateway-config.js";
import { BodyValidator, schemaComponents } from "./http/body-validator.js";
import { attachHttpRoutes } from "./http/http-app.js";
import { routeTable } from "./http/route-table.js";
import { LedgerClient } from "./ledger/ledger-client.js";
import { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { ledgerApiProtos } from "./proto/ledger-api-protos.js";

export interface LedgerAddress {
  host: string;
  port: number;
  tls?: { caCert?: string; clientCert?: string; clientKey?: string };
}

export interface RunningGateway {
  readonly port: number;
  /** Stops accepting, lets requests in flight finish (up to `drainMs`), closes the gRPC channel. */
  stop(drainMs?: number): Promise<void>;
}

/** Wires config -> ledger client -> route table -> uWS and starts listening. */
export async function startGateway(
  config: GatewayConfig,
  ledgerAddress: LedgerAddress,
  log: Logger,
): Promise<RunningGateway> {
  const metrics = config.metrics.enabled ? new GatewayMetrics() : undefined;
  const protos = ledgerApiProtos();
  const ledger = new LedgerClient({
    target: `${ledgerAddress.host}:${ledgerAddress.port}`,
    ...(ledgerAddress.tls ? { tls: ledgerAddress.tls } : {}),
    deadlineMs: config.server.requestTimeoutMs,
    ...(metrics ? { onCallEnd: (outcome) => metrics.recordCall(outcome) } : {}),
  });
  const codec = new ProtoJsonCodec(protos.root);
  const components = schemaComponents();
  const routes = routeTable({
    deps: { ledger, codec, protos },
    metrics,
    components,
    wsChannels: [],
    pathPrefix: config.server.pathPrefix,
  });

  const app = uWS.App();
  const http = attachHttpRoutes(app, {
    routes,
    pathPrefix: config.server.pathPrefix,
    maxBodyBytes: config.server.maxBodyBytes,
    validator: new BodyValidator(components),
    log,
    ...(metrics ? { metrics } : {}),
  });

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen(config.server.address, config.server.port, (socket) =>
      socket
        ? resolve(socket)
        : reject(new Error(`cannot listen on ${config.server.address}:${config.server.port}`)),
    ),
  );
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  log.info(
    { address: config.server.address, port, ledger: `${ledgerAddress.host}:${ledgerAddress.port}` },
    "gateway listening",
  );

  return {
    port,
    async stop(drainMs = 5_000) {
      uWS.us_listen_socket_close(listenSocket);
      const deadline = Date.now() + drainMs;
      while (http.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      app.close();
      ledger.close();
    },
  };
}
