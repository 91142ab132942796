import { javaInstantText } from "../jwt/token-lifetime.js";
import { ERROR_CATEGORIES } from "../proto/error-categories.js";
import { CONTEXTUALIZED, errorCode, resource, SandboxError } from "./sandbox-error.js";

/**
 * The errors every part of the sandbox raises (request validation, authentication and
 * permissions, parties, what the sandbox does not do), with Canton 3.5's codes and cause texts
 * (RequestValidationErrors, AuthorizationChecksErrors, PartyManagementServiceErrors,
 * SyncServiceError), so a client and the gateway's JsCantonError see what a real participant
 * would say. The ledger, users and packages keep their own beside them.
 */
const ERROR_CODES = {
  INVALID_ARGUMENT: errorCode("INVALID_ARGUMENT", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  INVALID_FIELD: errorCode("INVALID_FIELD", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  MISSING_FIELD: errorCode("MISSING_FIELD", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  PARTY_NOT_FOUND: errorCode(
    "PARTY_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  INVALID_PARTY_DETAILS_UPDATE_REQUEST: errorCode(
    "INVALID_PARTY_DETAILS_UPDATE_REQUEST",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED: errorCode(
    "CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED",
    ERROR_CATEGORIES.ContentionOnSharedResources,
  ),
  MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED: errorCode(
    "MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  NOT_CONNECTED_TO_SYNCHRONIZER: errorCode(
    "NOT_CONNECTED_TO_SYNCHRONIZER",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  UNAUTHENTICATED: errorCode(
    "UNAUTHENTICATED",
    ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials,
  ),
  PERMISSION_DENIED: errorCode("PERMISSION_DENIED", ERROR_CATEGORIES.InsufficientPermission),
  ACCESS_TOKEN_EXPIRED: errorCode("ACCESS_TOKEN_EXPIRED", ERROR_CATEGORIES.ContentionOnSharedResources),
  /**
   * Not a Canton code: the sandbox's answer for a Ledger API method it does not implement yet.
   * Canton's category for it (14) is redacted, but a developer must learn which method is missing,
   * so this one code keeps its details.
   */
  SANDBOX_UNSUPPORTED_OPERATION: errorCode(
    "SANDBOX_UNSUPPORTED_OPERATION",
    ERROR_CATEGORIES.InternalUnsupportedOperation,
    false,
  ),
  /**
   * Not a Canton code: the sandbox does not interpret Daml, so a template without a native model
   * (e.g. from an uploaded DAR) cannot be used in commands. FAILED_PRECONDITION, with its cause.
   */
  SANDBOX_NO_NATIVE_MODEL: errorCode(
    "SANDBOX_NO_NATIVE_MODEL",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
} as const;

export const errors = {
  invalidArgument: (reason: string, correlationId?: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_ARGUMENT,
      `The submitted request has invalid arguments: ${reason}`,
      correlationId === undefined ? {} : { correlationId },
    ),

  invalidField: (fieldName: string, message: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_FIELD,
      `The submitted command has a field with invalid value: Invalid field ${fieldName}: ${message}`,
    ),

  missingField: (fieldName: string) =>
    new SandboxError(
      ERROR_CODES.MISSING_FIELD,
      `The submitted command is missing a mandatory field: ${fieldName}`,
      { context: { field_name: fieldName } },
    ),

  partyNotFound: (operation: string, id: string) =>
    new SandboxError(
      ERROR_CODES.PARTY_NOT_FOUND,
      `Party: '${id}' was not found when ${operation}`,
      resource("PARTY", id),
    ),

  invalidPartyDetailsUpdate: (id: string, reason: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_PARTY_DETAILS_UPDATE_REQUEST,
      `Update operation for party '${id}' failed due to: ${reason}`,
      { ...resource("PARTY", id), ...CONTEXTUALIZED },
    ),

  concurrentPartyUpdate: (id: string) =>
    new SandboxError(
      ERROR_CODES.CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED,
      `Update operation for party '${id}' failed due to a concurrent update to the same party`,
      { ...resource("PARTY", id), ...CONTEXTUALIZED },
    ),

  maxPartyAnnotationsSizeExceeded: (id: string) =>
    new SandboxError(
      ERROR_CODES.MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED,
      `Maximum annotations size for party '${id}' has been exceeded`,
      { ...resource("PARTY", id), ...CONTEXTUALIZED },
    ),

  notConnectedToSynchronizer: (synchronizerId: string) =>
    new SandboxError(
      ERROR_CODES.NOT_CONNECTED_TO_SYNCHRONIZER,
      `This participant is not connected to synchronizer ${synchronizerId}.`,
    ),

  missingJwtToken: () =>
    new SandboxError(ERROR_CODES.UNAUTHENTICATED, "The command is missing a (valid) JWT token"),

  permissionDenied: (cause: string) =>
    new SandboxError(
      ERROR_CODES.PERMISSION_DENIED,
      `The provided authorization token is not sufficient to authorize the intended command: ${cause}`,
    ),

  /**
   * A stream whose token expired while it ran: AuthorizationChecksErrors.AccessTokenExpired, whose
   * cause is AuthorizationError.Expired's reason with both instants.
   */
  accessTokenExpired: (validUntilMs: number, nowMs: number) =>
    new SandboxError(
      ERROR_CODES.ACCESS_TOKEN_EXPIRED,
      `Claims were valid until ${javaInstantText(validUntilMs)}, current time is ${javaInstantText(nowMs)}`,
    ),

  unsupported: (method: string) =>
    new SandboxError(
      ERROR_CODES.SANDBOX_UNSUPPORTED_OPERATION,
      `${method} is not implemented by the sandbox yet`,
    ),

  noNativeModel: (identifier: string) =>
    new SandboxError(
      ERROR_CODES.SANDBOX_NO_NATIVE_MODEL,
      `The sandbox does not interpret Daml: ${identifier} has no native model (only the templates of gateway-samples can be used in commands)`,
    ),
};
