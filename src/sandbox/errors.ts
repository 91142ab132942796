import { ERROR_CODES } from "./error-codes.js";
import { SandboxError } from "./sandbox-error.js";

/**
 * The errors the sandbox raises, with Canton's cause texts, so a client (and the gateway's
 * JsCantonError) sees what a real participant would say.
 */
export const errors = {
  invalidArgument: (reason: string, correlationId?: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_ARGUMENT,
      `The submitted request has invalid arguments: ${reason}`,
      correlationId === undefined ? {} : { correlationId },
    ),

  invalidField: (fieldName: string, message: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_FIELD,
      `The submitted command has a field with invalid value: Invalid field ${fieldName}: ${message}`,
    ),

  missingField: (fieldName: string) =>
    new SandboxError(
      ERROR_CODES.MISSING_FIELD,
      `The submitted command is missing a mandatory field: ${fieldName}`,
      { context: { field_name: fieldName } },
    ),

  partyNotFound: (operation: string, party: string) =>
    new SandboxError(ERROR_CODES.PARTY_NOT_FOUND, `Party: '${party}' was not found when ${operation}`, {
      resources: [["PARTY", party]],
    }),

  invalidPartyDetailsUpdate: (party: string, reason: string) =>
    new SandboxError(
      ERROR_CODES.INVALID_PARTY_DETAILS_UPDATE_REQUEST,
      `Update operation for party '${party}' failed due to: ${reason}`,
      // ContextualizedDamlError, not DamlErrorWithDefiniteAnswer: no definite_answer key.
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  concurrentPartyUpdate: (party: string) =>
    new SandboxError(
      ERROR_CODES.CONCURRENT_PARTY_DETAILS_UPDATE_DETECTED,
      `Update operation for party '${party}' failed due to a concurrent update to the same party`,
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  maxPartyAnnotationsSizeExceeded: (party: string) =>
    new SandboxError(
      ERROR_CODES.MAX_PARTY_DETAILS_ANNOTATIONS_SIZE_EXCEEDED,
      `Maximum annotations size for party '${party}' has been exceeded`,
      { resources: [["PARTY", party]], definiteAnswer: null },
    ),

  missingJwtToken: () =>
    new SandboxError(ERROR_CODES.UNAUTHENTICATED, "The command is missing a (valid) JWT token"),

  permissionDenied: (cause: string) =>
    new SandboxError(
      ERROR_CODES.PERMISSION_DENIED,
      `The provided authorization token is not sufficient to authorize the intended command: ${cause}`,
    ),

  unsupported: (method: string) =>
    new SandboxError(
      ERROR_CODES.SANDBOX_UNSUPPORTED_OPERATION,
      `${method} is not implemented by the sandbox yet`,
    ),

  // ---- the ledger: commands, updates, contracts (src/sandbox/ledger)

  contractNotFound: (contractId: string) =>
    new SandboxError(ERROR_CODES.CONTRACT_NOT_FOUND, `Contract could not be found with id ${contractId}`, {
      resources: [["CONTRACT_ID", contractId]],
    }),

  contractKeyNotFound: (templateId: string, key: string) =>
    new SandboxError(
      ERROR_CODES.CONTRACT_KEY_NOT_FOUND,
      `dependency error: couldn't find key GlobalKey(${templateId}, ${key})`,
      {
        resources: [
          ["TEMPLATE_ID", templateId],
          ["CONTRACT_KEY", key],
        ],
      },
    ),

  duplicateContractKey: (templateId: string, key: string) =>
    new SandboxError(
      ERROR_CODES.DUPLICATE_CONTRACT_KEY,
      `Inconsistent: DuplicateContractKey: contract key is not unique: GlobalKey(${templateId}, ${key})`,
      {
        resources: [
          ["TEMPLATE_ID", templateId],
          ["CONTRACT_KEY", key],
        ],
      },
    ),

  /** Canton reports it at the offset the rejection took, with the accepted command's offset. */
  duplicateCommand: (completionOffset: number, existingSubmissionId: string | undefined) =>
    new SandboxError(ERROR_CODES.DUPLICATE_COMMAND, "Command submission already exists.", {
      context: {
        completion_offset: String(completionOffset),
        ...(existingSubmissionId ? { existing_submission_id: existingSubmissionId } : {}),
      },
      definiteAnswer: true,
    }),

  damlAuthorization: (reason: string) =>
    new SandboxError(ERROR_CODES.DAML_AUTHORIZATION_ERROR, `Interpretation error: Error: ${reason}`),

  templatePrecondition: (templateId: string, predicate: string) =>
    new SandboxError(
      ERROR_CODES.TEMPLATE_PRECONDITION_VIOLATED,
      `Interpretation error: Error: Template precondition violated in ${templateId}: ensure ${predicate}`,
    ),

  unhandledException: (message: string) =>
    new SandboxError(
      ERROR_CODES.UNHANDLED_EXCEPTION,
      `Interpretation error: Error: Unhandled Daml exception: DA.Exception.AssertionFailed:AssertionFailed@3f4deaf1{ message = "${message}" }`,
    ),

  wronglyTypedContract: (contractId: string, expected: string, actual: string) =>
    new SandboxError(
      ERROR_CODES.WRONGLY_TYPED_CONTRACT,
      `Interpretation error: Error: Contract ${contractId} was expected to be of type ${expected} but is of type ${actual}`,
      { resources: [["CONTRACT_ID", contractId]] },
    ),

  contractDoesNotImplementInterface: (contractId: string, templateId: string, interfaceId: string) =>
    new SandboxError(
      ERROR_CODES.CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE,
      `Interpretation error: Error: Contract ${contractId} of template ${templateId} does not implement interface ${interfaceId}`,
      { resources: [["CONTRACT_ID", contractId]] },
    ),

  disclosedContractAuthentication: (reason: string) =>
    new SandboxError(
      ERROR_CODES.DISCLOSED_CONTRACT_AUTHENTICATION_FAILED,
      `Disclosed contract authentication failed: ${reason}`,
    ),

  updateNotFound: (resource: readonly ["UPDATE_ID" | "OFFSET", string]) =>
    new SandboxError(ERROR_CODES.UPDATE_NOT_FOUND, "Update not found, or not visible.", {
      resources: [resource],
    }),

  contractEventsNotFound: (contractId: string) =>
    new SandboxError(ERROR_CODES.CONTRACT_EVENTS_NOT_FOUND, "Contract events not found, or not visible.", {
      resources: [["CONTRACT_ID", contractId]],
    }),

  contractPayloadNotFound: (contractId: string) =>
    new SandboxError(ERROR_CODES.CONTRACT_PAYLOAD_NOT_FOUND, "Contract payload not found, or not visible.", {
      resources: [["CONTRACT_ID", contractId]],
    }),

  templatesOrInterfacesNotFound: (templates: readonly string[], interfaces: readonly string[]) =>
    new SandboxError(
      ERROR_CODES.TEMPLATES_OR_INTERFACES_NOT_FOUND,
      `The following template or interface ids don't exist: ${[
        templates.length > 0 ? `Templates do not exist: [${templates.join(", ")}]. ` : "",
        interfaces.length > 0 ? `Interfaces do not exist: [${interfaces.join(", ")}]. ` : "",
      ]
        .join("")
        .trim()}`,
    ),

  offsetAfterLedgerEnd: (offsetType: string, requested: number, ledgerEnd: number) =>
    new SandboxError(
      ERROR_CODES.OFFSET_AFTER_LEDGER_END,
      `${offsetType} offset (${requested}) is after ledger end (${ledgerEnd})`,
    ),

  offsetOutOfRange: (message: string) => new SandboxError(ERROR_CODES.OFFSET_OUT_OF_RANGE, message),

  descendingOrderMissingEnd: () =>
    new SandboxError(
      ERROR_CODES.DESCENDING_ORDER_MISSING_END,
      "end_inclusive is not provided when descending_order is true",
      { definiteAnswer: null },
    ),

  noNativeModel: (identifier: string) =>
    new SandboxError(
      ERROR_CODES.SANDBOX_NO_NATIVE_MODEL,
      `The sandbox does not interpret Daml: ${identifier} has no native model (only the templates of gateway-samples can be used in commands)`,
    ),
};
