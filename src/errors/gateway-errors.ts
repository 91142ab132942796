import { ERROR_CATEGORIES } from "../proto/error-categories.js";
import { type CantonHttpError, gatewayError } from "./js-canton-error.js";
import type { ElementLimitExceededError } from "./stream-errors.js";

/**
 * The errors the gateway raises on its own, each in the code and category Canton's JSON API
 * uses for the same situation.
 */

/** Canton's InvalidArgument rejection (400, category 8) with its cause prefix; an error with a definite answer. */
export function invalidArgumentError(reason: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "INVALID_ARGUMENT",
    `The submitted request has invalid arguments: ${reason}`,
    { definiteAnswer: false },
  );
}

/** Canton truncates a cause to this many characters. */
const MAX_CAUSE_LENGTH = 512;

const truncated = (cause: string): string =>
  cause.length > MAX_CAUSE_LENGTH ? `${cause.slice(0, MAX_CAUSE_LENGTH)}...` : cause;

/** Canton's INVALID_FIELD (400, category 8): a command's `field` refused, its cause truncated as Canton does. */
export function invalidFieldError(field: string, message: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "INVALID_FIELD",
    truncated(`The submitted command has a field with invalid value: Invalid field ${field}: ${message}`),
    { definiteAnswer: false },
  );
}

/**
 * No token, or one the gateway's own check refused: 401. Canton gives no reason on the API
 * (its category redacts details); `correlationId` names the log entry that has it.
 */
export function missingTokenError(correlationId?: string): CantonHttpError {
  const error = gatewayError(
    ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials,
    "UNAUTHENTICATED",
    "The command is missing a (valid) JWT token",
    { context: { ledger_api_error: "invalid token" } },
  );
  if (correlationId !== undefined) error.body.correlationId = correlationId;
  return error;
}

/** No route at this path: 404. */
export function routeNotFoundError(method: string, url: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
    "NOT_FOUND",
    `No endpoint at ${method} ${url}`,
    { httpStatus: 404 },
  );
}

/**
 * A browser's request from an origin not in server.cors.allowed-origins: its CORS preflight, or
 * its WebSocket upgrade (browsers leave the Origin check of a WebSocket to the server): 403.
 */
export function corsOriginNotAllowedError(origin: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "CORS_ORIGIN_NOT_ALLOWED",
    `The origin ${JSON.stringify(origin)} is not one of server.cors.allowed-origins`,
    { httpStatus: 403 },
  );
}

/** A route at this path, but not for this method: 405. */
export function methodNotAllowedError(method: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
    "METHOD_NOT_ALLOWED",
    `Method ${method} is not allowed here`,
    { httpStatus: 405 },
  );
}

/**
 * A request whose framing the gateway will not guess at (conflicting Content-Length headers: a
 * proxy in front may have framed it otherwise, RFC 9112 section 6.3): 400, and the connection closes.
 */
export function ambiguousFramingError(cause: string): CantonHttpError {
  return gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "INVALID_REQUEST_FRAMING", cause, {
    httpStatus: 400,
  });
}

/** A request body that did not arrive within server.body-read-timeout: 408, and the connection closes. */
export function bodyTimeoutError(cause: string): CantonHttpError {
  return gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "REQUEST_BODY_TIMEOUT", cause, {
    httpStatus: 408,
  });
}

/**
 * A request that arrived while the gateway drains for shutdown: Canton's
 * CommonErrors.ServiceNotRunning (TransientServerFailure, 503), retryable on another instance.
 */
export function shuttingDownError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "SERVICE_NOT_RUNNING",
    "JSON Ledger API gateway is not running.",
    { context: { service_name: "JSON Ledger API gateway" }, definiteAnswer: false },
  );
}

/**
 * An operation only some Canton releases have, asked before the participant said which release it
 * runs (it has not answered since the gateway started: unreachable): 503, to be retried, rather
 * than a guess that would answer 404 for an operation it has, or serve one it has not.
 */
export function apiVersionUnknownError(method: string, path: string): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "LEDGER_API_VERSION_UNKNOWN",
    `${method} ${path} is an operation of some Canton releases only, and the participant has not said yet which release it runs (ledger.api-version auto)`,
    { definiteAnswer: false },
  );
}

/**
 * A WebSocket stream the worker's pace (websocket-config.upgrades-per-second) could not start
 * within websocket-config.upgrade-max-wait: 503 at the upgrade, or its error frame at its turn
 * (TransientServerFailure, as a gateway too busy to take it now), retryInfo and Retry-After
 * saying when to come back.
 */
export function upgradesPacedError(perSecond: number, retryAfterSeconds: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "WEBSOCKET_UPGRADES_PACED",
    `The gateway starts ${perSecond} WebSocket streams a second per worker (websocket-config.upgrades-per-second) and cannot start this one within websocket-config.upgrade-max-wait; retry later`,
    {
      httpStatus: 503,
      context: { limit: "websocket-config.upgrades-per-second", value: String(perSecond) },
      retryAfterSeconds,
    },
  );
}

/**
 * A renewal frame on a WebSocket whose stream still waits for its turn under
 * websocket-config.upgrades-per-second: there is no stream yet to move onto the token. 503, as
 * the stream will start within websocket-config.upgrade-max-wait.
 */
export function renewalBeforeStartError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "WEBSOCKET_UPGRADES_PACED",
    "This stream waits for its turn to start (websocket-config.upgrades-per-second) and takes a renewed token only once started; send the renewal frame again then",
    { httpStatus: 503, context: { limit: "websocket-config.upgrades-per-second" } },
  );
}

/** A request body over the configured limit: 413. */
export function requestTooLargeError(cause: string): CantonHttpError {
  return gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "REQUEST_TOO_LARGE", cause, {
    httpStatus: 413,
  });
}

/**
 * A request whose headers (in practice its token) are over what the ledger accepts: 431, as
 * Canton's JSON API answers a header past its HTTP server's limit (pekko-http, 8 KiB), and in the
 * category of REQUEST_TOO_LARGE. Not retryable as it stands, unlike a 429.
 */
export function requestHeadersTooLargeError(cause: string): CantonHttpError {
  return gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "REQUEST_HEADERS_TOO_LARGE", cause, {
    httpStatus: 431,
  });
}

/**
 * A list twin that matched more elements than the node limit. Canton answers 413 here, not the
 * 409 its category's gRPC code gives, and builds it from an error code with a definite answer.
 */
export function tooManyElementsError(error: ElementLimitExceededError): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED",
    error.message,
    { httpStatus: 413, definiteAnswer: false },
  );
}

/**
 * Templates or interfaces the packages do not define, or in packages the ledger does not have:
 * Canton's JSON API answers 404 TEMPLATES_OR_INTERFACES_NOT_FOUND (ids with their package id).
 */
export function templatesOrInterfacesNotFoundError(
  templateIds: readonly string[],
  interfaceIds: readonly string[] = [],
): CantonHttpError {
  const list = (ids: readonly string[], what: string) =>
    ids.length === 0 ? "" : `${what} do not exist: [${ids.join(", ")}]. `;
  return gatewayError(
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
    "TEMPLATES_OR_INTERFACES_NOT_FOUND",
    `${list(templateIds, "Templates")}${list(interfaceIds, "Interfaces")}`.trim(),
    {
      resources: [
        ...templateIds.map((id): [string, string] => ["TEMPLATE_ID", id]),
        ...interfaceIds.map((id): [string, string] => ["INTERFACE_ID", id]),
      ],
      definiteAnswer: false,
    },
  );
}

/** A choice the template (or interface) does not have, or a template the package does not define. */
export function invalidChoiceError(ownerId: string, choice: string): CantonHttpError {
  return invalidArgumentError(`Invalid template:${ownerId} or choice:${choice}`);
}

/**
 * A stream subscriber whose token expired while it streamed: Canton's
 * AuthorizationChecksErrors.AccessTokenExpired (ContentionOnSharedResources, ABORTED), whose
 * cause is the AuthorizationError.Expired reason with both instants as Java prints them.
 */
export function accessTokenExpiredError(validUntilMs: number, nowMs: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "ACCESS_TOKEN_EXPIRED",
    `Claims were valid until ${javaInstantText(validUntilMs)}, current time is ${javaInstantText(nowMs)}`,
    { definiteAnswer: false },
  );
}

/**
 * A stream subscriber the ledger no longer admits (a right revoked, the user deactivated):
 * Canton's AuthorizationChecksErrors.StaleUserManagementBasedStreamClaims, retryable at once
 * (its code overrides the category's delay with 0 seconds). Retrying either succeeds or fails
 * with the ledger's explicit denial.
 */
export function staleStreamAuthorizationError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "STALE_STREAM_AUTHORIZATION",
    "Stale stream authorization. Retry quickly.",
    { definiteAnswer: false, retryAfterSeconds: 0 },
  );
}

/**
 * A subscriber the ledger never admitted, whose admission question went unanswered for as long
 * as a yes may be old (twice the re-check interval): queued behind others, timed out, the ledger
 * slow. Not STALE_STREAM_AUTHORIZATION, which says a yes went stale: there was none. No element
 * went out; retryable.
 */
export function streamAdmissionUnansweredError(waitedMs: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "STREAM_ADMISSION_NOT_CONFIRMED",
    `The ledger did not answer within ${waitedMs} ms whether this token may read this stream; nothing was sent. Retry`,
    { definiteAnswer: false },
  );
}

/** A WebSocket renewal frame whose token is not for the stream's user (or not a Ledger API token). */
export function tokenOfAnotherUserError(): CantonHttpError {
  return invalidArgumentError("a renewed token must be a Ledger API token of the stream's own user");
}

/**
 * A renewal frame whose token the ledger did not confirm in time (the question timed out, the
 * ledger was away, or there was nothing yet to ask about): no yes, so the stream keeps its token.
 * Retryable: the client sends the token again.
 */
export function renewalUnconfirmedError(waitedMs: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.TransientServerFailure,
    "TOKEN_RENEWAL_NOT_CONFIRMED",
    `The ledger did not confirm the renewed token for this stream within ${waitedMs} ms; the stream keeps its current token`,
    { definiteAnswer: false },
  );
}

/**
 * Renewal frames past websocket-config.token-renewals-per-minute on one socket: refused before
 * anything is asked of the ledger, in the category of Canton's rate limits (429, retryable).
 */
export function renewalRateExceededError(perMinute: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "TOKEN_RENEWAL_RATE_EXCEEDED",
    `More than ${perMinute} renewal frames a minute on this stream (websocket-config.token-renewals-per-minute); the stream keeps its current token`,
    {
      httpStatus: 429,
      context: { limit: "websocket-config.token-renewals-per-minute", value: String(perMinute) },
    },
  );
}

/**
 * A WebSocket renewal frame on a stream that cannot move onto another token: the active
 * contracts are a snapshot with no offset to reopen from. It ends at its token's expiry.
 */
export function renewalNotSupportedError(endpoint: string): CantonHttpError {
  return invalidArgumentError(
    `${endpoint} cannot move onto a renewed token (its elements carry no offset to resume from); the stream ends at its token's expiry`,
  );
}

/**
 * A stream ticket (the GET form of a stream, docs/browsers.md) that is unknown, spent, expired,
 * or presented for another stream or from another origin, or a reconnect that does not carry its
 * stream's resume key: 401, as for a missing token. Nothing says which, as nothing is learnt
 * from guessing.
 */
export function invalidStreamTicketError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials,
    "INVALID_STREAM_TICKET",
    "The stream ticket is unknown, used, expired, or not for this stream; ask for a new one",
    { httpStatus: 401 },
  );
}

/**
 * A renewal for a ticket's stream while no connection reads it (between a drop and the client's
 * reconnect): nothing to put the token to. Retryable once the stream reads again.
 */
export function ticketStreamNotOpenError(): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "STREAM_TICKET_NOT_STREAMING",
    "No connection reads this ticket's stream now; renew once the client has reconnected",
    { definiteAnswer: false },
  );
}

/** A user holding as many unopened stream tickets as it may: 429 until some are opened or expire. */
export function tooManyStreamTicketsError(limit: number): CantonHttpError {
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "TOO_MANY_STREAM_TICKETS",
    `More than ${limit} unopened stream tickets for this user; open or let expire those it has`,
    { httpStatus: 429, context: { limit: String(limit) } },
  );
}

/** java.time.Instant#toString at millisecond precision: no fraction when it is zero. */
function javaInstantText(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
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

/** A cap per user or per client address (limits.*) that refused a request or a socket. */
interface QuotaExceeded {
  /** The cap's key without `limits.`: `streams-per-user`, `commands-per-second-per-user`, ... */
  readonly cap: string;
  readonly limit: number;
  /** `limit`: the cap's value reached; `table-full`: the quota table holds no new user or address. */
  readonly reason: "limit" | "table-full";
  /** When a retry may succeed (the command rate: a token's return); undefined: the category's 1 s. */
  readonly retryAfterMs: number | undefined;
}

/**
 * Past a cap of limits.*: 429 in the category Canton gives its own rate limits
 * (ContentionOnSharedResources, "rate limits that replenish quickly": retryable), with the code
 * Canton's rate limiting uses for the same thing: MAXIMUM_NUMBER_OF_STREAMS for connections and
 * streams, PARTICIPANT_BACKPRESSURE for requests in flight and the command rate (which, as
 * Canton's, has run nothing: a definite answer). retryInfo says when to retry. The body names
 * the cap and its value, never the user or the address.
 */
export function quotaExceededError(refusal: QuotaExceeded): CantonHttpError {
  const key = `limits.${refusal.cap}`;
  const streams = /connections|streams/.test(refusal.cap);
  const whose = refusal.cap.endsWith("per-address") ? "client address" : "user";
  const cause =
    refusal.reason === "table-full"
      ? `The gateway counts as many users and client addresses as it can; ${key} cannot take a new one now`
      : streams
        ? `The number of ${refusal.cap.startsWith("ws-") ? "WebSocket connections" : "streams"} of this ${whose} has reached the limit (${refusal.limit}) of ${key}`
        : `The gateway's ${key} (${refusal.limit}) is reached for this ${whose}`;
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    streams ? "MAXIMUM_NUMBER_OF_STREAMS" : "PARTICIPANT_BACKPRESSURE",
    cause,
    {
      httpStatus: 429,
      context: { limit: key, value: String(refusal.limit), reason: refusal.reason },
      ...(streams ? {} : { definiteAnswer: false }),
      ...(refusal.retryAfterMs === undefined
        ? {}
        : { retryAfterSeconds: Math.max(1, Math.ceil(refusal.retryAfterMs)) / 1000 }),
    },
  );
}

/** A subscription the participant's stream budget (limits.ledger-streams) gave no slot. */
interface LedgerStreamsExhausted {
  /**
   * `queue-full`: the queue of waiting subscriptions was full; `queue-timeout`: it waited its
   * longest; `user-share`: the user already held and waited for its share.
   */
  readonly reason: string;
  /** `subscription` or `authorization` (a question about a subscriber). */
  readonly purpose: string;
  readonly limit: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
  /** The user's share of the purpose (limits.ledger-streams-per-user). */
  readonly perUser: number;
}

/**
 * Past the participant's stream budget: Canton's own error for too many streams
 * (MAXIMUM_NUMBER_OF_STREAMS, ContentionOnSharedResources: retryable, retryInfo 1 second), as
 * 429 like the caps of quotaExceededError. It is the stream's error, so a WebSocket gets it as
 * its error frame and a list twin as its answer. The body names the key and the reason.
 */
export function ledgerStreamsExhaustedError(refusal: LedgerStreamsExhausted): CantonHttpError {
  if (refusal.reason === "user-share") {
    const what = refusal.purpose === "authorization" ? "authorization questions" : "streams";
    return gatewayError(
      ERROR_CATEGORIES.ContentionOnSharedResources,
      "MAXIMUM_NUMBER_OF_STREAMS",
      `This user already has ${refusal.perUser} ${what} open or waiting on the ledger, its share of limits.ledger-streams (limits.ledger-streams-per-user); end some of its streams first`,
      {
        httpStatus: 429,
        context: {
          limit: "limits.ledger-streams-per-user",
          value: String(refusal.perUser),
          reason: refusal.reason,
        },
      },
    );
  }
  const cause =
    refusal.reason === "queue-timeout"
      ? `The number of streams the gateway has open on the ledger has reached the limit (${refusal.limit}) of limits.ledger-streams, and none freed within limits.ledger-streams-queue-timeout (${refusal.queueTimeoutMs} ms)`
      : `The number of streams the gateway has open on the ledger has reached the limit (${refusal.limit}) of limits.ledger-streams, and limits.ledger-streams-queue (${refusal.queueLimit}) subscriptions already wait for one`;
  return gatewayError(ERROR_CATEGORIES.ContentionOnSharedResources, "MAXIMUM_NUMBER_OF_STREAMS", cause, {
    httpStatus: 429,
    context: { limit: "limits.ledger-streams", value: String(refusal.limit), reason: refusal.reason },
  });
}
