import { ERROR_CATEGORIES } from "../../proto/error-categories.js";
import { CONTEXTUALIZED, errorCode, resource, SandboxError } from "../sandbox-error.js";

/**
 * The errors of commands and reads, with Canton 3.5's codes and cause texts (ConsistencyErrors,
 * CommandExecutionErrors, RequestValidationErrors, TransactionRoutingError).
 */
const LEDGER_ERROR_CODES = {
  CONTRACT_NOT_FOUND: errorCode(
    "CONTRACT_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  CONTRACT_KEY_NOT_FOUND: errorCode(
    "CONTRACT_KEY_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  DUPLICATE_CONTRACT_KEY: errorCode(
    "DUPLICATE_CONTRACT_KEY",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  DUPLICATE_COMMAND: errorCode(
    "DUPLICATE_COMMAND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  DAML_AUTHORIZATION_ERROR: errorCode(
    "DAML_AUTHORIZATION_ERROR",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  TEMPLATE_PRECONDITION_VIOLATED: errorCode(
    "TEMPLATE_PRECONDITION_VIOLATED",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  UNHANDLED_EXCEPTION: errorCode("UNHANDLED_EXCEPTION", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther),
  WRONGLY_TYPED_CONTRACT: errorCode(
    "WRONGLY_TYPED_CONTRACT",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE: errorCode(
    "CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  DISCLOSED_CONTRACT_AUTHENTICATION_FAILED: errorCode(
    "DISCLOSED_CONTRACT_AUTHENTICATION_FAILED",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  UPDATE_NOT_FOUND: errorCode(
    "UPDATE_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  SYNCHRONIZER_NOT_FOUND: errorCode(
    "SYNCHRONIZER_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  PARTY_SIGNING_KEYS_NOT_FOUND: errorCode(
    "PARTY_SIGNING_KEYS_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  COMPLETION_NOT_FOUND: errorCode(
    "COMPLETION_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  CONTRACT_EVENTS_NOT_FOUND: errorCode(
    "CONTRACT_EVENTS_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  CONTRACT_PAYLOAD_NOT_FOUND: errorCode(
    "CONTRACT_PAYLOAD_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  TEMPLATES_OR_INTERFACES_NOT_FOUND: errorCode(
    "TEMPLATES_OR_INTERFACES_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  OFFSET_AFTER_LEDGER_END: errorCode(
    "OFFSET_AFTER_LEDGER_END",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateSeekAfterEnd,
  ),
  OFFSET_OUT_OF_RANGE: errorCode("OFFSET_OUT_OF_RANGE", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther),
  NON_POSITIVE_OFFSET: errorCode("NON_POSITIVE_OFFSET", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  PARTICIPANT_PRUNED_DATA_ACCESSED: errorCode(
    "PARTICIPANT_PRUNED_DATA_ACCESSED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  SUBMISSION_SYNCHRONIZER_NOT_READY: errorCode(
    "SUBMISSION_SYNCHRONIZER_NOT_READY",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  INVALID_PRESCRIBED_SYNCHRONIZER_ID: errorCode(
    "INVALID_PRESCRIBED_SYNCHRONIZER_ID",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  NO_COMMON_SYNCHRONIZER: errorCode(
    "NO_COMMON_SYNCHRONIZER",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  UNKNOWN_CONTRACT_SYNCHRONIZERS: errorCode(
    "UNKNOWN_CONTRACT_SYNCHRONIZERS",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  DESCENDING_ORDER_MISSING_END: errorCode(
    "DESCENDING_ORDER_MISSING_END",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
} as const;

const keyResources = (templateId: string, key: string) => ({
  resources: [
    ["TEMPLATE_ID", templateId],
    ["CONTRACT_KEY", key],
  ] as const,
});

export const ledgerErrors = {
  contractNotFound: (contractId: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.CONTRACT_NOT_FOUND,
      `Contract could not be found with id ${contractId}`,
      resource("CONTRACT_ID", contractId),
    ),

  contractKeyNotFound: (templateId: string, key: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.CONTRACT_KEY_NOT_FOUND,
      `dependency error: couldn't find key GlobalKey(${templateId}, ${key})`,
      keyResources(templateId, key),
    ),

  duplicateContractKey: (templateId: string, key: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.DUPLICATE_CONTRACT_KEY,
      `Inconsistent: DuplicateContractKey: contract key is not unique: GlobalKey(${templateId}, ${key})`,
      keyResources(templateId, key),
    ),

  /** Canton reports it at the offset the rejection took, with the accepted command's offset. */
  duplicateCommand: (completionOffset: number, existingSubmissionId: string | undefined) =>
    new SandboxError(LEDGER_ERROR_CODES.DUPLICATE_COMMAND, "Command submission already exists.", {
      context: {
        completion_offset: String(completionOffset),
        ...(existingSubmissionId ? { existing_submission_id: existingSubmissionId } : {}),
      },
      definiteAnswer: true,
    }),

  damlAuthorization: (reason: string) =>
    new SandboxError(LEDGER_ERROR_CODES.DAML_AUTHORIZATION_ERROR, `Interpretation error: Error: ${reason}`),

  templatePrecondition: (templateId: string, predicate: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.TEMPLATE_PRECONDITION_VIOLATED,
      `Interpretation error: Error: Template precondition violated in ${templateId}: ensure ${predicate}`,
    ),

  unhandledException: (message: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.UNHANDLED_EXCEPTION,
      `Interpretation error: Error: Unhandled Daml exception: DA.Exception.AssertionFailed:AssertionFailed@3f4deaf1{ message = "${message}" }`,
    ),

  wronglyTypedContract: (contractId: string, expected: string, actual: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.WRONGLY_TYPED_CONTRACT,
      `Interpretation error: Error: Contract ${contractId} was expected to be of type ${expected} but is of type ${actual}`,
      resource("CONTRACT_ID", contractId),
    ),

  contractDoesNotImplementInterface: (contractId: string, templateId: string, interfaceId: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.CONTRACT_DOES_NOT_IMPLEMENT_INTERFACE,
      `Interpretation error: Error: Contract ${contractId} of template ${templateId} does not implement interface ${interfaceId}`,
      resource("CONTRACT_ID", contractId),
    ),

  disclosedContractAuthentication: (reason: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.DISCLOSED_CONTRACT_AUTHENTICATION_FAILED,
      `Disclosed contract authentication failed: ${reason}`,
    ),

  updateNotFound: (resource: readonly ["UPDATE_ID" | "OFFSET" | "TRANSACTION_HASH", string]) =>
    new SandboxError(LEDGER_ERROR_CODES.UPDATE_NOT_FOUND, "Update not found, or not visible.", {
      resources: [resource],
    }),

  /** Canton 3.6's GetJwks: a synchronizer this participant does not know. */
  synchronizerNotFound: (synchronizerId: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.SYNCHRONIZER_NOT_FOUND,
      "Could not find synchronizer.",
      resource("SYNCHRONIZER_ID", synchronizerId),
    ),

  /** Canton 3.6's GetJwks: no signing keys of the party on the synchronizer (or no such party). */
  partySigningKeysNotFound: (party: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.PARTY_SIGNING_KEYS_NOT_FOUND,
      "Could not find signing keys for the requested party.",
      resource("PARTY", party),
    ),

  /** Canton 3.6's GetCompletionByHash: no completion of the hash (in hex) visible to the caller. */
  completionNotFound: (hashHex: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.COMPLETION_NOT_FOUND,
      "Completion not found, or not visible.",
      resource("TRANSACTION_HASH", hashHex),
    ),

  contractEventsNotFound: (contractId: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.CONTRACT_EVENTS_NOT_FOUND,
      "Contract events not found, or not visible.",
      resource("CONTRACT_ID", contractId),
    ),

  contractPayloadNotFound: (contractId: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.CONTRACT_PAYLOAD_NOT_FOUND,
      "Contract payload not found, or not visible.",
      resource("CONTRACT_ID", contractId),
    ),

  templatesOrInterfacesNotFound: (templates: readonly string[], interfaces: readonly string[]) =>
    new SandboxError(
      LEDGER_ERROR_CODES.TEMPLATES_OR_INTERFACES_NOT_FOUND,
      `The following template or interface ids don't exist: ${[
        templates.length > 0 ? `Templates do not exist: [${templates.join(", ")}]. ` : "",
        interfaces.length > 0 ? `Interfaces do not exist: [${interfaces.join(", ")}]. ` : "",
      ]
        .join("")
        .trim()}`,
    ),

  offsetAfterLedgerEnd: (offsetType: string, requested: number, ledgerEnd: number) =>
    new SandboxError(
      LEDGER_ERROR_CODES.OFFSET_AFTER_LEDGER_END,
      `${offsetType} offset (${requested}) is after ledger end (${ledgerEnd})`,
    ),

  nonPositiveOffset: (field: string, offset: number) =>
    new SandboxError(
      LEDGER_ERROR_CODES.NON_POSITIVE_OFFSET,
      `Offset ${offset} in ${field} is not a positive integer: the offset has to be a positive integer (>0)`,
    ),

  /** Canton's QueryValidRange: a read that starts at or below the pruning offset. */
  participantPrunedDataAccessed: (cause: string, prunedUpToInclusive: number) =>
    new SandboxError(LEDGER_ERROR_CODES.PARTICIPANT_PRUNED_DATA_ACCESSED, cause, {
      context: { earliest_offset: String(prunedUpToInclusive) },
      definiteAnswer: true,
    }),

  submissionSynchronizerNotReady: () =>
    new SandboxError(
      LEDGER_ERROR_CODES.SUBMISSION_SYNCHRONIZER_NOT_READY,
      "Trying to submit to a disconnected or not configured synchronizer.",
    ),

  inputContractsNotOnSynchronizer: (prescribed: string, actual: string) =>
    new SandboxError(
      LEDGER_ERROR_CODES.INVALID_PRESCRIBED_SYNCHRONIZER_ID,
      `The needed input contracts are not on ${prescribed}, but on ${actual}`,
    ),

  notAllInformeesOnSynchronizer: (prescribed: string, informeeSynchronizers: readonly string[]) =>
    new SandboxError(
      LEDGER_ERROR_CODES.INVALID_PRESCRIBED_SYNCHRONIZER_ID,
      `Not all informees are on the specified synchronizer: ${prescribed}, but on Set(${informeeSynchronizers.join(", ")})`,
    ),

  noCommonSynchronizer: () =>
    new SandboxError(
      LEDGER_ERROR_CODES.NO_COMMON_SYNCHRONIZER,
      "There is no common synchronizer to which all submitters can submit and all informees are connected.",
    ),

  /** Contracts between their unassignment and assignment have no synchronizer to be used on. */
  unknownContractSynchronizers: (contractIds: readonly string[]) =>
    new SandboxError(
      LEDGER_ERROR_CODES.UNKNOWN_CONTRACT_SYNCHRONIZERS,
      `The synchronizers for the contracts (${contractIds.join(", ")}) are currently unknown due to ongoing contract reassignments or disconnected synchronizers.`,
    ),

  offsetOutOfRange: (message: string) => new SandboxError(LEDGER_ERROR_CODES.OFFSET_OUT_OF_RANGE, message),

  descendingOrderMissingEnd: () =>
    new SandboxError(
      LEDGER_ERROR_CODES.DESCENDING_ORDER_MISSING_END,
      "end_inclusive is not provided when descending_order is true",
      CONTEXTUALIZED,
    ),
};
