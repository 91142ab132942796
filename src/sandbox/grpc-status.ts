import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ERROR_CATEGORIES } from "../proto/error-categories.js";
import { encodeStatusDetails, STATUS_DETAILS_KEY, type StatusDetails } from "../proto/status-details.js";
import { type ErrorCode, isRedacted } from "./error-codes.js";
import { SandboxError } from "./sandbox-error.js";

/** Where an error happened: the call's trace id and the participant that answers. */
export interface ErrorOrigin {
  readonly traceId: string;
  readonly participant: string;
}

/** Canton truncates the cause in the status message to this many characters. */
const MAX_CAUSE_LENGTH = 512;

const INTERNAL: ErrorCode = {
  id: "LEDGER_API_INTERNAL_ERROR",
  category: ERROR_CATEGORIES.SystemInternalAssumptionViolated,
};

/**
 * The gRPC error a client receives for `error`, in Canton's wire form: status code from the
 * category, message `ID(category,correlation-prefix): cause`, and a google.rpc.Status in the
 * `grpc-status-details-bin` trailer with one ErrorInfo, RetryInfo when retryable, RequestInfo
 * and one ResourceInfo per named resource. Anything that is not a SandboxError is a sandbox
 * bug and goes out as Canton's redacted INTERNAL error.
 */
export function toServiceError(error: unknown, origin: ErrorOrigin): ServiceError {
  const sandboxError = error instanceof SandboxError ? error : new SandboxError(INTERNAL, String(error));
  const details = isRedacted(sandboxError.code)
    ? redactedDetails(sandboxError, origin)
    : fullDetails(sandboxError, origin);
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_KEY, encodeStatusDetails(details));
  return Object.assign(new Error(details.message), {
    code: details.code,
    details: details.message,
    metadata,
  });
}

function fullDetails(error: SandboxError, origin: ErrorOrigin): StatusDetails {
  const { code, options } = error;
  const correlationId = options.correlationId ?? origin.traceId;
  const cause =
    error.cause.length > MAX_CAUSE_LENGTH ? `${error.cause.slice(0, MAX_CAUSE_LENGTH)}...` : error.cause;
  const definiteAnswer = options.definiteAnswer === undefined ? false : options.definiteAnswer;
  const metadata: Record<string, string> = {
    participant: origin.participant,
    ...options.context,
    ...(definiteAnswer === null ? {} : { definite_answer: String(definiteAnswer) }),
    tid: origin.traceId,
    category: String(code.category.id),
  };
  // Canton drops context entries with an empty value.
  for (const [key, value] of Object.entries(metadata)) if (value === "") delete metadata[key];
  const retry = code.category.retryAfterSeconds;
  return {
    code: code.category.grpcCode,
    message: `${code.id}(${code.category.id},${correlationId.slice(0, 8)}): ${cause}`,
    errorInfos: [{ reason: code.id, domain: "", metadata }],
    requestInfos: [{ requestId: correlationId, servingData: "" }],
    retryInfos: retry === undefined ? [] : [{ retryDelaySeconds: retry }],
    resourceInfos: (options.resources ?? []).map(([resourceType, resourceName]) => ({
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
