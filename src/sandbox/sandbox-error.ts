import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ERROR_CATEGORIES, type ErrorCategory } from "../proto/error-categories.js";
import { ledgerApiProtos, PROTO_OPTIONS } from "../proto/ledger-api-protos.js";
import type { Status__Output } from "../proto/ledger-api-types.js";
import { encodeStatusDetails, STATUS_DETAILS_KEY, type StatusDetails } from "../proto/status-details.js";
import { cutAt, fitErrorContent, MAX_TRACE_ID_LENGTH, truncateString } from "./error-budget.js";

/**
 * A Canton error code: its id and category (facts from Canton 3.5's error definitions). A code
 * is data; `SandboxError` pairs it with a cause and context, `toServiceError` puts it on the wire.
 * The codes and their constructors live with the domain that raises them (errors.ts for request
 * validation, auth and parties; ledger/, users/ and packages/ for their own).
 */
export interface ErrorCode {
  readonly id: string;
  readonly category: ErrorCategory;
  /**
   * Canton hides cause and details of some categories (internal, auth, permission, unsupported)
   * from the client: only a "contact the operator" message with the request id goes out. Unset =
   * the category decides.
   */
  readonly redact?: boolean;
}

export const errorCode = (id: string, category: ErrorCategory, redact?: boolean): ErrorCode =>
  redact === undefined ? { id, category } : { id, category, redact };

export function isRedacted(code: ErrorCode): boolean {
  return code.redact ?? code.category.redactDetails;
}

/** Canton's ErrorResource names, as they appear in ResourceInfo.resourceType. */
type ErrorResourceType =
  | "PARTY"
  | "USER"
  | "IDENTITY_PROVIDER_CONFIG"
  | "PACKAGE"
  | "CONTRACT_ID"
  | "CONTRACT_KEY"
  | "TEMPLATE_ID"
  | "UPDATE_ID"
  | "OFFSET"
  | "TRANSACTION_HASH"
  | "SYNCHRONIZER_ID";

export interface SandboxErrorOptions {
  /** Extra error context (ErrorInfo metadata), e.g. `field_name` of MISSING_FIELD. */
  readonly context?: Readonly<Record<string, string>>;
  readonly resources?: readonly (readonly [ErrorResourceType, string])[];
  /**
   * `definite_answer` in the metadata: Canton's DamlErrorWithDefiniteAnswer always sets it (false
   * unless said), its ContextualizedDamlError never does (null here).
   */
  readonly definiteAnswer?: boolean | null;
  /** Canton uses e.g. the party allocation's submission id instead of the trace id here. */
  readonly correlationId?: string;
}

/** Options naming the one resource an error is about (a ResourceInfo in the details). */
export function resource(type: ErrorResourceType, name: string): SandboxErrorOptions {
  return { resources: [[type, name]] };
}

/** Canton's ContextualizedDamlError carries no definite_answer; DamlErrorWithDefiniteAnswer does. */
export const CONTEXTUALIZED: SandboxErrorOptions = { definiteAnswer: null };

/**
 * A Ledger API error raised by a handler: a Canton error code with its cause. Thrown anywhere
 * inside a call; the handler wrapper turns it into the gRPC status with Canton's details.
 */
export class SandboxError extends Error {
  readonly code: ErrorCode;
  override readonly cause: string;
  readonly options: SandboxErrorOptions;

  constructor(code: ErrorCode, cause: string, options: SandboxErrorOptions = {}) {
    super(`${code.id}: ${cause}`);
    this.name = "SandboxError";
    this.code = code;
    this.cause = cause;
    this.options = options;
  }
}

/** Where an error happened: the call's trace id and the participant that answers. */
export interface ErrorOrigin {
  readonly traceId: string;
  readonly participant: string;
}

/** Canton truncates the cause in the status message to this many characters. */
const MAX_CAUSE_LENGTH = 512;

/** The Any wrapper, type URL and tags of a RequestInfo, without its request id. */
const REQUEST_INFO_PACKING = 55;

const INTERNAL = errorCode("LEDGER_API_INTERNAL_ERROR", ERROR_CATEGORIES.SystemInternalAssumptionViolated);

/**
 * The gRPC error a client receives for `error`, in Canton's wire form: status code from the
 * category, message `ID(category,correlation-prefix): cause`, and a google.rpc.Status in the
 * `grpc-status-details-bin` trailer with one ErrorInfo, RetryInfo when retryable, RequestInfo
 * and one ResourceInfo per named resource. Anything that is not a SandboxError is a sandbox
 * bug and goes out as Canton's redacted INTERNAL error.
 */
export function toServiceError(error: unknown, origin: ErrorOrigin): ServiceError {
  const details = statusDetailsOf(error, origin);
  // grpc-js percent-encodes the message into the grpc-message trailer with encodeURI, which
  // throws on a lone surrogate (a quoted request value, or one cut in half): outside any
  // handler, so the whole process died. Canton's transport writes such a character as '?'.
  details.message = wellFormed(details.message);
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_KEY, encodeStatusDetails(details));
  return Object.assign(new Error(details.message), {
    code: details.code,
    details: details.message,
    metadata,
  });
}

/**
 * The same error as the google.rpc.Status a failed completion carries, so completion consumers
 * and callers of the synchronous endpoints decode one form.
 */
export function rpcStatusOf(error: unknown, origin: ErrorOrigin): Status__Output {
  const type = ledgerApiProtos().type("google.rpc.Status");
  const bytes = encodeStatusDetails(statusDetailsOf(error, origin));
  return type.toObject(type.decode(bytes), PROTO_OPTIONS) as Status__Output;
}

function statusDetailsOf(error: unknown, origin: ErrorOrigin): StatusDetails {
  const sandboxError = error instanceof SandboxError ? error : new SandboxError(INTERNAL, String(error));
  return isRedacted(sandboxError.code)
    ? redactedDetails(sandboxError, origin)
    : fullDetails(sandboxError, origin);
}

function fullDetails(error: SandboxError, origin: ErrorOrigin): StatusDetails {
  const { code, options } = error;
  const traceId = truncateString(origin.traceId, MAX_TRACE_ID_LENGTH);
  const correlationId = truncateString(options.correlationId ?? origin.traceId, MAX_TRACE_ID_LENGTH);
  const cause =
    error.cause.length > MAX_CAUSE_LENGTH ? `${cutAt(error.cause, MAX_CAUSE_LENGTH)}...` : error.cause;
  const definiteAnswer = options.definiteAnswer === undefined ? false : options.definiteAnswer;
  const message = `${code.id}(${code.category.id},${correlationId.slice(0, 8)}): ${cause}`;
  const mandatoryContext: Record<string, string> = {
    ...(definiteAnswer === null ? {} : { definite_answer: String(definiteAnswer) }),
    tid: traceId,
    category: String(code.category.id),
  };
  const retry = code.category.retryAfterSeconds;
  // Whatever the request echoed into the context or the resources, the status stays within
  // Canton's size budget (error-budget.ts).
  const fitted = fitErrorContent({
    message,
    codeId: code.id,
    mandatoryContext,
    // Canton drops context entries with an empty value.
    context: { participant: origin.participant, ...options.context },
    resources: options.resources ?? [],
    otherDetailsBytes:
      REQUEST_INFO_PACKING + Buffer.byteLength(correlationId) + (retry === undefined ? 0 : 60),
  });
  return {
    code: code.category.grpcCode,
    message,
    errorInfos: [{ reason: code.id, domain: "", metadata: { ...fitted.context, ...mandatoryContext } }],
    requestInfos: [{ requestId: correlationId, servingData: "" }],
    retryInfos: retry === undefined ? [] : [{ retryDelaySeconds: retry }],
    resourceInfos: fitted.resources.map(([resourceType, resourceName]) => ({
      resourceType,
      resourceName,
      owner: "",
      description: "",
    })),
  };
}

/** Security-sensitive categories: the client only learns whom to ask and which request it was. */
function redactedDetails(error: SandboxError, origin: ErrorOrigin): StatusDetails {
  const correlationId = error.options.correlationId ?? origin.traceId;
  return {
    code: error.code.category.grpcCode ?? status.INTERNAL,
    message: `An error occurred. Please contact the operator and inquire about the request ${correlationId} with tid ${origin.traceId}`,
    errorInfos: [],
    requestInfos: [{ requestId: correlationId, servingData: "" }],
    retryInfos: [],
    resourceInfos: [],
  };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every lone surrogate replaced by U+FFFD, so that it has a UTF-8 form. */
function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\ufffd");
}
