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
  /**
   * Security-sensitive: the ledger sends the client only a "contact the operator" message
   * with the request and trace ids, never cause or details.
   */
  readonly redactDetails: boolean;
}

function category(
  id: number,
  name: string,
  grpcCode: GrpcStatus,
  options: { retryAfterSeconds?: number; redactDetails?: boolean } = {},
): ErrorCategory {
  const redactDetails = options.redactDetails ?? false;
  return options.retryAfterSeconds === undefined
    ? { id, name, grpcCode, redactDetails }
    : { id, name, grpcCode, redactDetails, retryAfterSeconds: options.retryAfterSeconds };
}

const RETRY_1S = { retryAfterSeconds: 1 };
const REDACTED = { redactDetails: true };

export const ERROR_CATEGORIES = {
  TransientServerFailure: category(1, "TransientServerFailure", GrpcStatus.UNAVAILABLE, RETRY_1S),
  ContentionOnSharedResources: category(2, "ContentionOnSharedResources", GrpcStatus.ABORTED, RETRY_1S),
  DeadlineExceededRequestStateUnknown: category(
    3,
    "DeadlineExceededRequestStateUnknown",
    GrpcStatus.DEADLINE_EXCEEDED,
    RETRY_1S,
  ),
  SystemInternalAssumptionViolated: category(
    4,
    "SystemInternalAssumptionViolated",
    GrpcStatus.INTERNAL,
    REDACTED,
  ),
  UnredactedSecurityAlert: category(5, "UnredactedSecurityAlert", GrpcStatus.INVALID_ARGUMENT),
  SecurityAlert: category(5, "SecurityAlert", GrpcStatus.INVALID_ARGUMENT, REDACTED),
  AuthInterceptorInvalidAuthenticationCredentials: category(
    6,
    "AuthInterceptorInvalidAuthenticationCredentials",
    GrpcStatus.UNAUTHENTICATED,
    REDACTED,
  ),
  InsufficientPermission: category(7, "InsufficientPermission", GrpcStatus.PERMISSION_DENIED, REDACTED),
  InvalidIndependentOfSystemState: category(
    8,
    "InvalidIndependentOfSystemState",
    GrpcStatus.INVALID_ARGUMENT,
  ),
  InvalidGivenCurrentSystemStateOther: category(
    9,
    "InvalidGivenCurrentSystemStateOther",
    GrpcStatus.FAILED_PRECONDITION,
  ),
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
  InvalidGivenCurrentSystemStateSeekAfterEnd: category(
    12,
    "InvalidGivenCurrentSystemStateSeekAfterEnd",
    GrpcStatus.OUT_OF_RANGE,
    RETRY_1S,
  ),
  // Not meant for the API; Canton gives it no gRPC code.
  BackgroundProcessDegradationWarning: category(
    13,
    "BackgroundProcessDegradationWarning",
    GrpcStatus.UNKNOWN,
  ),
  InternalUnsupportedOperation: category(
    14,
    "InternalUnsupportedOperation",
    GrpcStatus.UNIMPLEMENTED,
    REDACTED,
  ),
} as const satisfies Record<string, ErrorCategory>;

// Id 5 names two categories; either gives the same gRPC code.
const BY_ID = new Map<number, ErrorCategory>(Object.values(ERROR_CATEGORIES).map((c) => [c.id, c]));

export function errorCategoryById(id: number): ErrorCategory | undefined {
  return BY_ID.get(id);
}
