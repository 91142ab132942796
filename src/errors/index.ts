/**
 * The errors module's public face: every error body and code the gateway sends, HTTP or
 * WebSocket, is built here. Files inside src/errors may move; importers go through here. The
 * body builder itself (gatewayError) stays inside, so that no one else can make a body.
 */
export {
  errorFrameBody,
  errorFrameText,
  isLedgerLost,
  LEDGER_LOSS_CAUSES,
  type LedgerLossCause,
  ledgerLossCause,
  queryFrameTimeoutBody,
  renewalRefusedFrameText,
  resumeCloseReason,
  type SlowConsumerCause,
  slowConsumerBody,
  slowConsumerCloseReason,
  traced,
  withResumeOffset,
} from "./error-frames.js";
export {
  type ErrorAnswer,
  errorAnswer,
  isGatewayFault,
  isTokenRefusal,
  jsCantonErrorOfGrpc,
} from "./error-mapping.js";
export {
  accessTokenExpiredError,
  ambiguousFramingError,
  apiVersionUnknownError,
  bodyTimeoutError,
  corsOriginNotAllowedError,
  INTERNAL_ERROR_CODE,
  invalidArgumentError,
  invalidFieldError,
  invalidStreamTicketError,
  ledgerStreamsExhaustedError,
  methodNotAllowedError,
  missingTokenError,
  quotaExceededError,
  renewalBeforeStartError,
  renewalNotSupportedError,
  renewalRateExceededError,
  renewalUnconfirmedError,
  requestTooLargeError,
  routeNotFoundError,
  shuttingDownError,
  staleStreamAuthorizationError,
  streamAdmissionUnansweredError,
  ticketStreamNotOpenError,
  tokenOfAnotherUserError,
  tooManyStreamTicketsError,
  upgradesPacedError,
} from "./gateway-errors.js";
export { httpStatusOfGrpc, METADATA_TOO_LARGE } from "./http-status.js";
export { InvalidValueError } from "./invalid-value-error.js";
export { CantonHttpError, type JsCantonError } from "./js-canton-error.js";
export {
  ElementLimitExceededError,
  endReasonOf,
  IdleTimeoutError,
  STREAM_END_REASONS,
  type StreamEndReason,
} from "./stream-errors.js";
export { unknownPathAnswer } from "./unknown-path.js";
