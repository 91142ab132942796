import { defer, switchMap } from "rxjs";
import type { RouteDeps } from "../../http/grpc-route.js";
import { serverStream } from "../../ledger/server-stream.js";
import { mapInOrder } from "../../streams/mapInOrder.js";
import type { StreamEndpoint } from "../stream-endpoint.js";

const API_PACKAGE = "com.daml.ledger.api.v2";

export interface LedgerStreamSpec {
  path: string;
  summary: string;
  service: string;
  rpc: string;
  requestSchema: string;
  responseSchema: string;
  deprecated?: boolean;
  /** Rewrites legacy request forms into the 3.5 request JSON (default: as is). */
  toRequest?: (request: unknown) => unknown;
  /** Reshapes one element's JSON; undefined drops the element (default: as is). */
  toElement?: (json: unknown) => unknown;
  idleByDefault: (request: unknown) => boolean;
  offsetOf?: (element: string) => string | number | undefined;
}

/**
 * A server-streaming gRPC method as a StreamEndpoint: request JSON -> gRPC request (with the
 * package signatures its commands need) -> pull-based call -> one JSON text per element. The
 * element's packages are loaded before it is written, which waits only the first time a
 * package appears; every other element goes through synchronously.
 */
export function ledgerStream(deps: RouteDeps, spec: LedgerStreamSpec): StreamEndpoint {
  const method = deps.protos.root.lookupService(`${API_PACKAGE}.${spec.service}`).methods[spec.rpc];
  if (!method?.resolvedRequestType || !method.resolvedResponseType || !method.responseStream) {
    throw new Error(`${spec.service}/${spec.rpc} is not a server-streaming method`);
  }
  const requestType = method.resolvedRequestType.fullName.slice(1);
  const responseType = method.resolvedResponseType.fullName.slice(1);
  const toRequest = spec.toRequest ?? ((request: unknown) => request);
  const toElement = spec.toElement ?? ((json: unknown) => json);
  const text = (json: unknown) => {
    const element = toElement(json);
    return element === undefined ? undefined : JSON.stringify(element);
  };

  return {
    path: spec.path,
    summary: spec.summary,
    requestSchema: spec.requestSchema,
    responseSchema: spec.responseSchema,
    ...(spec.deprecated ? { deprecated: true } : {}),
    ...(spec.offsetOf ? { offsetOf: spec.offsetOf } : {}),
    idleByDefault: spec.idleByDefault,
    open: (request, token, demand$) =>
      defer(() => deps.json.fromJson(requestType, toRequest(request), token)).pipe(
        switchMap((grpcRequest) =>
          serverStream(
            () => deps.ledger.serverStream(spec.service, spec.rpc, grpcRequest as object, token),
            demand$,
          ),
        ),
        mapInOrder((message) => {
          if (deps.json.missingPackages(responseType, message).length === 0) {
            return text(deps.json.toJsonNow(responseType, message));
          }
          return deps.json.toJson(responseType, message, token).then(text);
        }),
      ),
  };
}
