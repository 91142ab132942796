import { status as GrpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { InvalidJsonError } from "../codec/index.js";
import { SignatureNotFoundError, ValueCodecError } from "../lf/index.js";
import { errorCategoryById } from "../proto/error-categories.js";
import { decodeStatusDetails } from "../proto/status-details.js";
import {
  internalError,
  invalidArgumentError,
  invalidChoiceError,
  requestHeadersTooLargeError,
  requestTooLargeError,
  templatesOrInterfacesNotFoundError,
  tooManyElementsError,
} from "./gateway-errors.js";
import { httpStatusOfGrpc, isOversizedMessage, isOversizedMetadata } from "./http-status.js";
import { InvalidValueError } from "./invalid-value-error.js";
import { CantonHttpError, type JsCantonError, retryInfoText } from "./js-canton-error.js";
import { ElementLimitExceededError, StreamPolicyError } from "./stream-errors.js";

/**
 * The one place that turns failures into what clients see: gRPC status -> JsCantonError ->
 * HTTP status, and malformed input -> 400 `Invalid value for: <location>`. HTTP routes,
 * list twins and WebSocket error frames all come through here.
 */

export function isGrpcError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === "number" &&
    (error as Partial<ServiceError>).metadata instanceof Metadata
  );
}

/** Canton's `CODE_ID(category,correlation): cause` message prefix. */
const CANTON_MESSAGE = /^[A-Z0-9_]+\(\d+,[^)]*\): ([\s\S]*)$/;
/** Security-sensitive errors (auth, permissions, internals) reach clients without details. */
const REDACTED_MESSAGE =
  /^An error occurred\. Please contact the operator and inquire about the request (.+) with tid (.+)$/;

/** An error without Canton's category (redacted, or from another server): the gRPC status only. */
function uncategorized(
  error: ServiceError,
  code: string,
  cause: string,
  ids: { correlationId: string | null; traceId: string | null } = { correlationId: null, traceId: null },
): JsCantonError {
  return {
    code,
    cause,
    ...ids,
    context: {},
    resources: [],
    errorCategory: -1,
    grpcCodeValue: error.code,
    retryInfo: null,
    definiteAnswer: null,
  };
}

/**
 * Canton's ABORTED codes that end a running stream for its token alone (AuthorizationChecksErrors,
 * category ContentionOnSharedResources): ACCESS_TOKEN_EXPIRED at the token's expiry, and
 * STALE_STREAM_AUTHORIZATION when UserBasedOngoingAuthorization finds the user's rights changed
 * (or the user deactivated) since the stream opened, or could not confirm them in time.
 */
const TOKEN_ABORTS: ReadonlySet<string> = new Set(["ACCESS_TOKEN_EXPIRED", "STALE_STREAM_AUTHORIZATION"]);

/**
 * The ledger refused the token itself: UNAUTHENTICATED, PERMISSION_DENIED (a right revoked, the
 * user deactivated), or one of its ABORTED codes ending a stream for its token (TOKEN_ABORTS).
 * Any other failure says nothing about the token.
 */
export function isTokenRefusal(error: unknown): boolean {
  if (!isGrpcError(error)) return false;
  if (error.code === GrpcStatus.UNAUTHENTICATED || error.code === GrpcStatus.PERMISSION_DENIED) return true;
  if (error.code !== GrpcStatus.ABORTED) return false;
  const reason = decodeStatusDetails(error.metadata)?.errorInfos[0]?.reason;
  return reason !== undefined && TOKEN_ABORTS.has(reason);
}

export function jsCantonErrorOfGrpc(error: ServiceError): JsCantonError {
  const redacted = REDACTED_MESSAGE.exec(error.details ?? "");
  if (redacted) {
    const present = (id: string | undefined) => (id === undefined || /^<no-/.test(id) ? null : id);
    return uncategorized(error, "NA", "A security-sensitive error has been received", {
      correlationId: present(redacted[1]),
      traceId: present(redacted[2]),
    });
  }
  const details = decodeStatusDetails(error.metadata);
  const errorInfo = details?.errorInfos.length === 1 ? details.errorInfos[0] : undefined;
  if (!details || !errorInfo) {
    // Not a Canton-style error (another server, a transport failure): keep what gRPC says.
    return uncategorized(error, GrpcStatus[error.code] ?? "UNKNOWN", error.details || error.message);
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
    retryInfo: retryDelay === undefined ? null : retryInfoText(retryDelay),
    definiteAnswer: metadata.definite_answer === undefined ? null : metadata.definite_answer === "true",
  };
}

/**
 * What Canton's JSON API answers when it cannot type a value: an unknown package, template,
 * interface or key is 404 TEMPLATES_OR_INTERFACES_NOT_FOUND; an unknown choice (or the template
 * it was looked for on) 400 INVALID_ARGUMENT. A package that failed to load for another reason
 * than the ledger not having it answers with that reason.
 */
function signatureNotFoundAnswer(error: SignatureNotFoundError): ErrorAnswer {
  const loadFailure = error.cause;
  if (loadFailure !== undefined) {
    if (isGrpcError(loadFailure) && loadFailure.code === GrpcStatus.NOT_FOUND) {
      return json(templatesOrInterfacesNotFoundError([error.id]));
    }
    return errorAnswer(loadFailure);
  }
  switch (error.what) {
    case "template":
    case "contract key":
      return json(templatesOrInterfacesNotFoundError([error.id]));
    case "interface":
      return json(templatesOrInterfacesNotFoundError([], [error.id]));
    case "choice":
      return json(invalidChoiceError(error.id, error.choice ?? ""));
    case "data type":
      return json(invalidArgumentError(error.message));
  }
}

export type ErrorAnswer =
  | { kind: "text"; status: 400; text: string }
  | { kind: "json"; status: number; body: JsCantonError };

const json = (error: CantonHttpError): ErrorAnswer => ({
  kind: "json",
  status: error.httpStatus,
  body: error.body,
});

/** Anything a handler throws, as the answer a client gets. Unknown errors are a 500 that leaks nothing. */
export function errorAnswer(error: unknown): ErrorAnswer {
  return knownAnswer(error) ?? json(internalError());
}

/**
 * True for a failure of the gateway's own making (the 500 that leaks nothing): the one kind worth
 * an error-level log line. A client's malformed input or the ledger's refusal is the client's
 * answer, not the operator's problem, and logging it would let any client fill the log.
 */
export function isGatewayFault(error: unknown): boolean {
  return knownAnswer(error) === undefined && !(error instanceof StreamPolicyError);
}

function knownAnswer(error: unknown): ErrorAnswer | undefined {
  if (error instanceof InvalidValueError) return { kind: "text", status: 400, text: error.message };
  if (error instanceof InvalidJsonError) {
    return { kind: "text", status: 400, text: new InvalidValueError("body", error.message).message };
  }
  if (error instanceof CantonHttpError) return json(error);
  // An ill-typed Daml value names its JSON path (Canton answers 500 here; we do better).
  if (error instanceof ValueCodecError) return json(invalidArgumentError(error.message));
  if (error instanceof SignatureNotFoundError) return signatureNotFoundAnswer(error);
  if (error instanceof ElementLimitExceededError) return json(tooManyElementsError(error));
  if (isGrpcError(error)) {
    if (isOversizedMessage(error.code, error.details)) {
      return json(requestTooLargeError(`The request is larger than the ledger accepts: ${error.details}`));
    }
    if (isOversizedMetadata(error.code, error.details))
      return json(requestHeadersTooLargeError(error.details));
    return { kind: "json", status: httpStatusOfGrpc(error.code), body: jsCantonErrorOfGrpc(error) };
  }
  return undefined;
}
