import type { ErrorCode } from "./error-codes.js";

/** Canton's ErrorResource names, as they appear in ResourceInfo.resourceType. */
export type ErrorResourceType =
  | "PARTY"
  | "USER"
  | "IDENTITY_PROVIDER_CONFIG"
  | "PACKAGE"
  | "CONTRACT_ID"
  | "CONTRACT_KEY"
  | "TEMPLATE_ID"
  | "UPDATE_ID"
  | "OFFSET";

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
