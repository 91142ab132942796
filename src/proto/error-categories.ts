import { status as GrpcStatus } from "@grpc/grpc-js";

/**
 * Canton's error categories: the number is what JsCantonError.errorCategory and the
 * `category` metadata of ErrorInfo carry; each category implies its gRPC status code and
 * whether (and after how long) a retry makes sense.
 */
export interface ErrorCategory {
  readonly id: number;
  readonly name: string;
  readonly grpcCode: GrpcStatus;
  /** Seconds to wait before retrying; undefined = do not retry. */
  readonly retryAfterSeconds?: number;
}

function category(id: number, name: string, grpcCode: GrpcStatus, retryAfterSeconds?: number): ErrorCategory {
  return retryAfterSeconds === undefined ? { id, name, grpcCode } : { id, name, grpcCode, retryAfterSeconds };
}

export const ERROR_CATEGORIES = {
  TransientServerFailure: category(1, "TransientServerFailure", GrpcStatus.UNAVAILABLE, 1),
  ContentionOnSharedResources: category(2, "ContentionOnSharedResources", GrpcStatus.ABORTED, 1),
  DeadlineExceededRequestStateUnknown: category(3, "DeadlineExceededRequestStateUnknown", GrpcStatus.DEADLINE_EXCEEDED, 1),
  SystemInternalAssumptionViolated: category(4, "SystemInternalAssumptionViolated", GrpcStatus.INTERNAL),
  MaliciousOrFaultyBehaviour: category(5, "MaliciousOrFaultyBehaviour", GrpcStatus.UNKNOWN),
  AuthInterceptorInvalidAuthenticationCredentials: category(
    6,
    "AuthInterceptorInvalidAuthenticationCredentials",
    GrpcStatus.UNAUTHENTICATED,
  ),
  InsufficientPermission: category(7, "InsufficientPermission", GrpcStatus.PERMISSION_DENIED),
  InvalidIndependentOfSystemState: category(8, "InvalidIndependentOfSystemState", GrpcStatus.INVALID_ARGUMENT),
  InvalidGivenCurrentSystemStateOther: category(9, "InvalidGivenCurrentSystemStateOther", GrpcStatus.FAILED_PRECONDITION),
  InvalidGivenCurrentSystemStateResourceExists: category(
    10,
    "InvalidGivenCurrentSystemStateResourceExists",
    GrpcStatus.ALREADY_EXISTS,
  ),
  InvalidGivenCurrentSystemStateResourceMissing: category(
    11,
    "InvalidGivenCurrentSystemStateResourceMissing",
    GrpcStatus.NOT_FOUND,
  ),
  InvalidGivenCurrentSystemStateSeekAfterEnd: category(12, "InvalidGivenCurrentSystemStateSeekAfterEnd", GrpcStatus.OUT_OF_RANGE),
  BackgroundProcessDegradationWarning: category(13, "BackgroundProcessDegradationWarning", GrpcStatus.UNKNOWN),
  InternalUnsupportedOperation: category(14, "InternalUnsupportedOperation", GrpcStatus.UNIMPLEMENTED),
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCategoryName = keyof typeof ERROR_CATEGORIES;

const BY_ID = new Map<number, ErrorCategory>(Object.values(ERROR_CATEGORIES).map((c) => [c.id, c]));

export function errorCategoryById(id: number): ErrorCategory | undefined {
  return BY_ID.get(id);
}
