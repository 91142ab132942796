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
  // Packages: RequestValidationErrors.NotFound, PackageServiceErrors, CantonPackageServiceError,
  // TopologyManagerError (vetting), LedgerApiErrors (preferred packages)
  PACKAGE_NOT_FOUND: code(
    "PACKAGE_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  INVALID_DAR: code("INVALID_DAR", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  DAR_PARSE_ERROR: code("DAR_PARSE_ERROR", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  DAR_DEPENDENCIES_NOT_VALID: code(
    "DAR_DEPENDENCIES_NOT_VALID",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  PACKAGE_SERVICE_NOT_CONNECTED_TO_SYNCHRONIZER: code(
    "PACKAGE_SERVICE_NOT_CONNECTED_TO_SYNCHRONIZER",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  KNOWN_PACKAGE_VERSION: code("KNOWN_PACKAGE_VERSION", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  NOT_VALID_UPGRADE_PACKAGE: code(
    "NOT_VALID_UPGRADE_PACKAGE",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  TOPOLOGY_DEPENDENCIES_NOT_VETTED: code(
    "TOPOLOGY_DEPENDENCIES_NOT_VETTED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  TOPOLOGY_SERIAL_MISMATCH: code(
    "TOPOLOGY_SERIAL_MISMATCH",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  UNRESOLVED_VETTING_REFERENCE: code(
    "UNRESOLVED_VETTING_REFERENCE",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  AMBIGUOUS_VETTING_REFERENCE: code(
    "AMBIGUOUS_VETTING_REFERENCE",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  NO_PREFERRED_PACKAGES_FOUND: code(
    "NO_PREFERRED_PACKAGES_FOUND",
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
  // Commands and reads of the ledger (ConsistencyErrors, CommandExecutionErrors,
  // RequestValidationErrors, TransactionRoutingError), used by src/sandbox/ledger
  CONTRACT_NOT_FOUND: code(
    "CONTRACT_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  CONTRACT_KEY_NOT_FOUND: code(
    "CONTRACT_KEY_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  DUPLICATE_CONTRACT_KEY: code(
    "DUPLICATE_CONTRACT_KEY",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  DUPLICATE_COMMAND: code("DUPLICATE_COMMAND", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists),
  DAML_AUTHORIZATION_ERROR: code(
    "DAML_AUTHORIZATION_ERROR",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  TEMPLATE_PRECONDITION_VIOLATED: code(
    "TEMPLATE_PRECONDITION_VIOLATED",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  UNHANDLED_EXCEPTION: code("UNHANDLED_EXCEPTION", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther),
  WRONGLY_TYPED_CONTRACT: code(
    "WRONGLY_TYPED_CONTRACT",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE: code(
    "CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  DISCLOSED_CONTRACT_AUTHENTICATION_FAILED: code(
    "DISCLOSED_CONTRACT_AUTHENTICATION_FAILED",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  UPDATE_NOT_FOUND: code("UPDATE_NOT_FOUND", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing),
  CONTRACT_EVENTS_NOT_FOUND: code(
    "CONTRACT_EVENTS_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  CONTRACT_PAYLOAD_NOT_FOUND: code(
    "CONTRACT_PAYLOAD_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  TEMPLATES_OR_INTERFACES_NOT_FOUND: code(
    "TEMPLATES_OR_INTERFACES_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  OFFSET_AFTER_LEDGER_END: code(
    "OFFSET_AFTER_LEDGER_END",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateSeekAfterEnd,
  ),
  OFFSET_OUT_OF_RANGE: code("OFFSET_OUT_OF_RANGE", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther),
  DESCENDING_ORDER_MISSING_END: code(
    "DESCENDING_ORDER_MISSING_END",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  /**
   * Not a Canton code: the sandbox does not interpret Daml, so a template without a native model
   * (e.g. from an uploaded DAR) cannot be used in commands. FAILED_PRECONDITION, with its cause.
   */
  SANDBOX_NO_NATIVE_MODEL: code(
    "SANDBOX_NO_NATIVE_MODEL",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
} as const satisfies Record<string, ErrorCode>;
