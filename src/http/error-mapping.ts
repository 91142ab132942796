import { status as GrpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { InvalidJsonError } from "../codec/index.js";
import { SignatureNotFoundError, ValueCodecError } from "../lf/index.js";
import { ERROR_CATEGORIES, type ErrorCategory, errorCategoryById } from "../proto/error-categories.js";
import { decodeStatusDetails } from "../proto/status-details.js";

/**
 * The one place that turns failures into what clients see: gRPC status -> JsCantonError ->
 * HTTP status, and malformed input -> 400 `Invalid value for: <location>`. HTTP routes,
 * list twins and WebSocket error frames all come through here.
 */
export interface JsCantonError {
  code: string;
  cause: string;
  correlationId: string | null;
  traceId: string | null;
  context: Record<string, string>;
  resources: [string, string][];
  errorCategory: number;
  grpcCodeValue: number | null;
  retryInfo: string | null;
  definiteAnswer: boolean | null;
}

/** Malformed body, path or query value: answered as 400 text/plain, as Canton does. */
export class InvalidValueError extends Error {
  override name = "InvalidValueError";
  constructor(
    /** `body`, `query parameter limit`, `path parameter party`. */
    readonly location: string,
    readonly detail?: string,
  ) {
    super(`Invalid value for: ${location}${detail ? ` (${detail})` : ""}`);
  }
}

/** A failure the gateway itself decides (no token, list too long, ...), already in JSON form. */
export class CantonHttpError extends Error {
  override name = "CantonHttpError";
  constructor(
    readonly httpStatus: number,
    readonly body: JsCantonError,
  ) {
    super(body.cause);
  }
}

export function isGrpcError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === "number" &&
    (error as Partial<ServiceError>).metadata instanceof Metadata
  );
}

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

export function httpStatusOfGrpc(code: number): number {
  return HTTP_OF_GRPC[code as GrpcStatus] ?? 500;
}

/** Canton's `CODE_ID(category,correlation): cause` message prefix. */
const CANTON_MESSAGE = /^[A-Z0-9_]+\(\d+,[^)]*\): ([\s\S]*)$/;
/** Security-sensitive errors (auth, permissions, internals) reach clients without details. */
const REDACTED_MESSAGE =
  /^An error occurred\. Please contact the operator and inquire about the request (.+) with tid (.+)$/;

export function jsCantonErrorOfGrpc(error: ServiceError): JsCantonError {
  const redacted = REDACTED_MESSAGE.exec(error.details ?? "");
  if (redacted) {
    const present = (id: string | undefined) => (id === undefined || /^<no-/.test(id) ? null : id);
    return {
      code: "NA",
      cause: "A security-sensitive error has been received",
      correlationId: present(redacted[1]),
      traceId: present(redacted[2]),
      context: {},
      resources: [],
      errorCategory: -1,
      grpcCodeValue: error.code,
      retryInfo: null,
      definiteAnswer: null,
    };
  }
  const details = decodeStatusDetails(error.metadata);
  const errorInfo = details?.errorInfos.length === 1 ? details.errorInfos[0] : undefined;
  if (!details || !errorInfo) {
    // Not a Canton-style error (another server, a transport failure): keep what gRPC says.
    return {
      code: GrpcStatus[error.code] ?? "UNKNOWN",
      cause: error.details || error.message,
      correlationId: null,
      traceId: null,
      context: {},
      resources: [],
      errorCategory: -1,
      grpcCodeValue: error.code,
      retryInfo: null,
      definiteAnswer: null,
    };
  }
  const metadata = errorInfo.metadata;
  const categoryId = Number(metadata.category);
  const category = errorCategoryById(categoryId);
  const traceId = metadata.tid ?? null;
  const requestId = details.requestInfos[0]?.requestId;
  const retryDelay = details.retryInfos[0]?.retryDelaySeconds ?? category?.retryAfterSeconds;
  return {
    code: errorInfo.reason,
    cause: CANTON_MESSAGE.exec(details.message)?.[1] ?? details.message,
    correlationId: requestId !== undefined && requestId !== traceId ? requestId : null,
    traceId,
    context: metadata,
    resources: details.resourceInfos.map((r) => [r.resourceType, r.resourceName]),
    errorCategory: Number.isInteger(categoryId) ? categoryId : -1,
    grpcCodeValue: category?.grpcCode ?? error.code,
    retryInfo: retryDelay === undefined ? null : formatDuration(retryDelay),
    definiteAnswer: metadata.definite_answer === undefined ? null : metadata.definite_answer === "true",
  };
}

/** Scala's FiniteDuration text (`1 second`, `500 milliseconds`), as Canton writes retryInfo. */
function formatDuration(seconds: number): string {
  if (Number.isInteger(seconds)) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const millis = Math.round(seconds * 1000);
  return `${millis} millisecond${millis === 1 ? "" : "s"}`;
}

/** An error the gateway raises itself, in the shape and category Canton would use. */
export function gatewayError(
  category: ErrorCategory,
  code: string,
  cause: string,
  context: Record<string, string> = {},
): CantonHttpError {
  const body: JsCantonError = {
    code,
    cause,
    correlationId: null,
    traceId: null,
    context,
    resources: [],
    errorCategory: category.id,
    grpcCodeValue: category.grpcCode,
    retryInfo: category.retryAfterSeconds === undefined ? null : formatDuration(category.retryAfterSeconds),
    definiteAnswer: null,
  };
  return new CantonHttpError(httpStatusOfGrpc(category.grpcCode), body);
}

/** Canton's InvalidArgument rejection (400, category 8) with its cause prefix. */
export function invalidArgumentError(reason: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "INVALID_ARGUMENT",
    `The submitted request has invalid arguments: ${reason}`,
  );
}

export function missingTokenError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials,
    "UNAUTHENTICATED",
    "The command is missing a (valid) JWT token",
    { ledger_api_error: "invalid token" },
  );
}

export type ErrorAnswer =
  | { kind: "text"; status: 400; text: string }
  | { kind: "json"; status: number; body: JsCantonError };

/** Anything a handler throws, as the answer a client gets. Unknown errors are a 500 that leaks nothing. */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof InvalidValueError) return { kind: "text", status: 400, text: error.message };
  if (error instanceof InvalidJsonError) {
    return { kind: "text", status: 400, text: new InvalidValueError("body", error.message).message };
  }
  if (error instanceof CantonHttpError) return { kind: "json", status: error.httpStatus, body: error.body };
  // An ill-typed Daml value names its JSON path (Canton answers 500 here; we do better).
  if (error instanceof ValueCodecError || error instanceof SignatureNotFoundError) {
    const invalid = invalidArgumentError(error.message);
    return { kind: "json", status: invalid.httpStatus, body: invalid.body };
  }
  if (isGrpcError(error)) {
    const body = jsCantonErrorOfGrpc(error);
    return { kind: "json", status: httpStatusOfGrpc(error.code), body };
  }
  const internal = gatewayError(
    ERROR_CATEGORIES.SystemInternalAssumptionViolated,
    "LEDGER_API_INTERNAL_ERROR",
    "An internal error occurred in the gateway; see its log",
  );
  return { kind: "json", status: internal.httpStatus, body: internal.body };
}
