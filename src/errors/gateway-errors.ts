import { ERROR_CATEGORIES } from "../proto/error-categories.js";
import { type CantonHttpError, gatewayError } from "./js-canton-error.js";
import type { ElementLimitExceededError } from "./stream-errors.js";

/**
 * The errors the gateway raises on its own, each in the code and category Canton's JSON API
 * uses for the same situation.
 */

/** Canton's InvalidArgument rejection (400, category 8) with its cause prefix. */
export function invalidArgumentError(reason: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "INVALID_ARGUMENT",
    `The submitted request has invalid arguments: ${reason}`,
  );
}

/** No token, or one the gateway's own check refused: 401. */
export function missingTokenError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials,
    "UNAUTHENTICATED",
    "The command is missing a (valid) JWT token",
    { ledger_api_error: "invalid token" },
  );
}

/** No route at this path: 404. */
export function routeNotFoundError(method: string, url: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
    "NOT_FOUND",
    `No endpoint at ${method} ${url}`,
    {},
    404,
  );
}

/** A route at this path, but not for this method: 405. */
export function methodNotAllowedError(method: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
    "METHOD_NOT_ALLOWED",
    `Method ${method} is not allowed here`,
    {},
    405,
  );
}

/** A request body over the configured limit: 413. */
export function requestTooLargeError(cause: string): CantonHttpError {
  return gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "REQUEST_TOO_LARGE", cause, {}, 413);
}

/**
 * A list twin that matched more elements than the node limit. Canton answers 413 here, not the
 * 409 its category's gRPC code gives.
 */
export function tooManyElementsError(error: ElementLimitExceededError): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED",
    error.message,
    {},
    413,
  );
}

export const INTERNAL_ERROR_CODE = "LEDGER_API_INTERNAL_ERROR";

/** A fault of the gateway itself: a 500 that leaks nothing (the details go to the log). */
export function internalError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.SystemInternalAssumptionViolated,
    INTERNAL_ERROR_CODE,
    "An internal error occurred in the gateway; see its log",
  );
}
