import type { ErrorCategory } from "../proto/error-categories.js";
import { httpStatusOfGrpc } from "./http-status.js";

/** The error object clients get, in Canton's JSON API shape: HTTP bodies and final WebSocket frames. */
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

/** A failure the gateway itself decides (no token, list too long, ...), already in JSON form. */
export class CantonHttpError extends Error {
  override name = "CantonHttpError";
  constructor(
    readonly httpStatus: number,
    readonly body: JsCantonError,
  ) {
    // An answer to a caller, not a fault of the gateway's: its stack is never read, and capturing
    // one was an eighth of what a refused WebSocket upgrade cost the worker (a storm's 503s).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(body.cause);
    Error.stackTraceLimit = limit;
  }
}

export interface GatewayErrorOptions {
  readonly context?: Record<string, string>;
  readonly resources?: [string, string][];
  /**
   * Canton's DamlErrorWithDefiniteAnswer writes `false` unless said; its plain DamlError (and
   * errors that are no Canton error code) `null`.
   */
  readonly definiteAnswer?: boolean | null;
  /** Unless said, the status of the category's gRPC code. */
  readonly httpStatus?: number;
  /** Unless said, the category's retry delay (an error code may override it, as Canton's do). */
  readonly retryAfterSeconds?: number;
}

/** An error the gateway raises itself, in the shape and category Canton would use. */
export function gatewayError(
  category: ErrorCategory,
  code: string,
  cause: string,
  options: GatewayErrorOptions = {},
): CantonHttpError {
  const retryAfter = options.retryAfterSeconds ?? category.retryAfterSeconds;
  const body: JsCantonError = {
    code,
    cause,
    correlationId: null,
    traceId: null,
    context: options.context ?? {},
    resources: options.resources ?? [],
    errorCategory: category.id,
    grpcCodeValue: category.grpcCode,
    retryInfo: retryAfter === undefined ? null : retryInfoText(retryAfter),
    definiteAnswer: options.definiteAnswer ?? null,
  };
  return new CantonHttpError(options.httpStatus ?? httpStatusOfGrpc(category.grpcCode), body);
}

/** Scala's FiniteDuration text (`1 second`, `500 milliseconds`), as Canton writes retryInfo. */
export function retryInfoText(seconds: number): string {
  if (Number.isInteger(seconds)) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const millis = Math.round(seconds * 1000);
  return `${millis} millisecond${millis === 1 ? "" : "s"}`;
}
