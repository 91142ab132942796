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
