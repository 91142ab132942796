import { ERROR_CATEGORIES, type ErrorCategory } from "../proto/error-categories.js";

/**
 * The Canton error codes the sandbox emits, each with Canton's id and category (facts from
 * Canton 3.5: RequestValidationErrors, PartyManagementServiceErrors, AuthorizationChecksErrors).
 * A code is data; `SandboxError` pairs it with a cause and context, `grpc-status.ts` puts it on
 * the wire.
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

export function isRedacted(code: ErrorCode): boolean {
  return code.redact ?? code.category.redactDetails;
}

const code = (id: string, category: ErrorCategory, redact?: boolean): ErrorCode =>
  redact === undefined ? { id, category } : { id, category, redact };

export const ERROR_CODES = {
  // RequestValidationErrors
  INVALID_ARGUMENT: code("INVALID_ARGUMENT", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  INVALID_FIELD: code("INVALID_FIELD", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  MISSING_FIELD: code("MISSING_FIELD", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  // PartyManagementServiceErrors
  PARTY_NOT_FOUND: code("PARTY_NOT_FOUND", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing),
  INVALID_PARTY_DETAILS_UPDATE_REQUEST: code(
    "INVALID_PARTY_DETAILS_UPDATE_REQUEST",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED: code(
    "CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED",
    ERROR_CATEGORIES.ContentionOnSharedResources,
  ),
  MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED: code(
    "MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  // SyncServiceError
  NOT_CONNECTED_TO_SYNCHRONIZER: code(
    "NOT_CONNECTED_TO_SYNCHRONIZER",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  // AuthorizationChecksErrors
  UNAUTHENTICATED: code("UNAUTHENTICATED", ERROR_CATEGORIES.AuthInterceptorInvalidAuthenticationCredentials),
  PERMISSION_DENIED: code("PERMISSION_DENIED", ERROR_CATEGORIES.InsufficientPermission),
  /**
   * Not a Canton code: the sandbox's answer for a Ledger API method it does not implement yet.
   * Canton's category for it (14) is redacted, but a developer must learn which method is missing,
   * so this one code keeps its details.
   */
  SANDBOX_UNSUPPORTED_OPERATION: code(
    "SANDBOX_UNSUPPORTED_OPERATION",
    ERROR_CATEGORIES.InternalUnsupportedOperation,
    false,
  ),
} as const satisfies Record<string, ErrorCode>;
