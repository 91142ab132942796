import { status as GrpcStatus } from "@grpc/grpc-js";
import { ERROR_CATEGORIES } from "../proto/error-categories.js";
import { errorAnswer, isGrpcError } from "./error-mapping.js";
import { gatewayError, type JsCantonError } from "./js-canton-error.js";

/**
 * The body of a final error frame. Everything goes through error-mapping; the one difference
 * from HTTP is that a socket has no status line and no text/plain answer, so a malformed query
 * frame (400 text over HTTP) becomes an INVALID_ARGUMENT JsCantonError carrying the same
 * `Invalid value for: body (...)` cause.
 */
export function errorFrameBody(error: unknown, traceId?: string): JsCantonError {
  const answer = errorAnswer(error);
  const body =
    answer.kind === "json"
      ? answer.body
      : gatewayError(ERROR_CATEGORIES.InvalidIndependentOfSystemState, "INVALID_ARGUMENT", answer.text).body;
  return traced(body, traceId);
}

/**
 * `body` naming the stream's trace (`traceId`) when it names none: the ledger's errors name the
 * trace their call carried, the gateway's own get the stream's here.
 */
export function traced(body: JsCantonError, traceId: string | undefined): JsCantonError {
  return body.traceId === null && traceId !== undefined ? { ...body, traceId } : body;
}

export function errorFrameText(error: unknown, traceId?: string): string {
  return JSON.stringify(errorFrameBody(error, traceId));
}

/**
 * The frame that answers a refused token renewal: the refusal's JsCantonError, marked
 * `token_renewal: refused` in its context. Not the stream's end: it goes on, on the old token.
 */
export function renewalRefusedFrameText(error: unknown, traceId?: string): string {
  const body = errorFrameBody(error, traceId);
  return JSON.stringify({ ...body, context: { ...body.context, token_renewal: "refused" } });
}

/** Why a socket was disconnected as a slow consumer (nats.js: max_pending / write_deadline). */
export type SlowConsumerCause = "hard_limit" | "write_deadline" | "dropped";

const CAUSE_TEXT: Record<SlowConsumerCause, string> = {
  hard_limit: "more bytes buffered for the client than the hard limit",
  write_deadline: "the client read nothing for longer than the write deadline",
  dropped: "the socket refused a frame",
};

/**
 * The error frame of a slow-consumer disconnect. Retryable (ContentionOnSharedResources): the
 * client reconnects and resumes after `resume_after_offset`, so nothing is lost.
 */
export function slowConsumerBody(
  cause: SlowConsumerCause,
  delivered: number,
  offset: string | number | undefined,
): JsCantonError {
  const resume = offset === undefined ? "" : `; resume after offset ${offset}`;
  const context: Record<string, string> = { cause, elements_delivered: String(delivered) };
  if (offset !== undefined) context.resume_after_offset = String(offset);
  return gatewayError(
    ERROR_CATEGORIES.ContentionOnSharedResources,
    "JSON_API_SLOW_CONSUMER",
    `Stream closed as a slow consumer: ${CAUSE_TEXT[cause]}; ${delivered} elements delivered${resume}`,
    { context },
  ).body;
}

/** The close reason of that disconnect: at most 123 bytes, so only the essentials. */
export function slowConsumerCloseReason(
  cause: SlowConsumerCause,
  offset: string | number | undefined,
): string {
  const text = `slow consumer (${cause})${offset === undefined ? "" : `; resume after offset ${offset}`}`;
  return Buffer.byteLength(text) <= 123 ? text : `slow consumer (${cause})`;
}

/**
 * The error frame of a WebSocket that sent no query frame in time: the client's fault, not
 * retryable as it is (INVALID_ARGUMENT, as a malformed query frame is).
 */
export function queryFrameTimeoutBody(ms: number): JsCantonError {
  return gatewayError(
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
    "INVALID_ARGUMENT",
    `No query frame within ${ms} ms of the upgrade: a stream starts with its request as the first frame`,
  ).body;
}

/** The stream's ledger went away (its call ended UNAVAILABLE): the client resumes once it is back. */
export function isLedgerLost(error: unknown): boolean {
  return isGrpcError(error) && error.code === GrpcStatus.UNAVAILABLE;
}

/**
 * How a stream's ledger went away, for metrics: the ledger's graceful close (GOAWAY), the
 * keepalive finding a dead connection, the connection lost or refused otherwise, or the ledger
 * itself answering UNAVAILABLE (shutting down, overloaded).
 */
export const LEDGER_LOSS_CAUSES = ["goaway", "keepalive", "connection", "ledger"] as const;
export type LedgerLossCause = (typeof LEDGER_LOSS_CAUSES)[number];

export function ledgerLossCause(error: unknown): LedgerLossCause {
  const message = (error as { details?: unknown; message?: unknown }).details ?? (error as Error).message;
  const text = typeof message === "string" ? message : "";
  if (text.includes("GOAWAY")) return "goaway";
  if (/keepalive/i.test(text)) return "keepalive";
  if (/^(Connection dropped|No connection to the ledger|Stream refused)/.test(text)) return "connection";
  return "ledger";
}

/**
 * A stream's last error frame that tells the client where to resume, as the slow-consumer frame
 * does: `resume_after_offset` in its context, when the stream had delivered an element with one.
 */
export function withResumeOffset(body: JsCantonError, offset: string | number | undefined): JsCantonError {
  if (offset === undefined) return body;
  return { ...body, context: { ...body.context, resume_after_offset: String(offset) } };
}

/** The close reason that goes with it: at most 123 bytes. */
export function resumeCloseReason(what: string, offset: string | number | undefined): string {
  const text = `${what}${offset === undefined ? "" : `; resume after offset ${offset}`}`;
  return Buffer.byteLength(text) <= 123 ? text : what;
}
