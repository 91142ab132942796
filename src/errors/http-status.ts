import { status as GrpcStatus } from "@grpc/grpc-js";

const HTTP_OF_GRPC: Partial<Record<GrpcStatus, number>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.FAILED_PRECONDITION]: 400,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNAUTHENTICATED]: 401,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.CANCELLED]: 499,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
};

/** The HTTP status of a gRPC status code, as Canton's JSON API maps it; 500 for the rest. */
export function httpStatusOfGrpc(code: number): number {
  return HTTP_OF_GRPC[code as GrpcStatus] ?? 500;
}

/**
 * A RESOURCE_EXHAUSTED that says a gRPC message was over a size limit: the ledger's inbound limit
 * (grpc-java: "gRPC message exceeds maximum size", grpc-js: "Received message larger than max")
 * or the gateway's own send limit ("Sent message larger than max"). It is the request that is too
 * large, not the ledger that is busy: retrying cannot help, so it is a 413 and not the 429 of
 * RESOURCE_EXHAUSTED (where Canton's JSON API, mapping every RESOURCE_EXHAUSTED alike, says 429).
 */
export function isOversizedMessage(code: number, details: string | undefined): boolean {
  return (
    code === GrpcStatus.RESOURCE_EXHAUSTED &&
    /message (?:larger than max|exceeds maximum size)/i.test(details ?? "")
  );
}

/**
 * How the ledger client's refusal of a call whose headers are over the ledger's limit begins
 * (src/ledger: refused before sending, or the ledger answered 431), told apart by this text as
 * an oversized message is by grpc-js's.
 */
export const METADATA_TOO_LARGE = "Request metadata too large";

/** A call refused for its header block (in practice its token): the request's fault, a 431. */
export function isOversizedMetadata(code: number, details: string | undefined): boolean {
  return code === GrpcStatus.RESOURCE_EXHAUSTED && (details ?? "").startsWith(METADATA_TOO_LARGE);
}
