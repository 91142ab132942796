import { ERROR_CODES } from "./error-codes.js";
import { SandboxError } from "./sandbox-error.js";

/**
 * The errors the sandbox raises, with Canton's cause texts, so a client (and the gateway's
 * JsCantonError) sees what a real participant would say.
 */
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

  partyNotFound: (operation: string, party: string) =>
    new SandboxError(ERROR_CODES.PARTY_NOT_FOUND, `Party: '${party}' was not found when ${operation}`, {
      resources: [["PARTY", party]],
    }),

  invalidPartyDetailsUpdate: (party: string, reason: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_PARTY_DETAILS_UPDATE_REQUEST,
      `Update operation for party '${party}' failed due to: ${reason}`,
      // ContextualizedDamlError, not DamlErrorWithDefiniteAnswer: no definite_answer key.
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  concurrentPartyUpdate: (party: string) =>
    new SandboxError(
      ERROR_CODES.CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED,
      `Update operation for party '${party}' failed due to a concurrent update to the same party`,
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  maxPartyAnnotationsSizeExceeded: (party: string) =>
    new SandboxError(
      ERROR_CODES.MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED,
      `Maximum annotations size for party '${party}' has been exceeded`,
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  missingJwtToken: () =>
    new SandboxError(ERROR_CODES.UNAUTHENTICATED, "The command is missing a (valid) JWT token"),

  permissionDenied: (cause: string) =>
    new SandboxError(
      ERROR_CODES.PERMISSION_DENIED,
      `The provided authorization token is not sufficient to authorize the intended command: ${cause}`,
    ),

  unsupported: (method: string) =>
    new SandboxError(
      ERROR_CODES.SANDBOX_UNSUPPORTED_OPERATION,
      `${method} is not implemented by the sandbox yet`,
    ),
};
