import { ERROR_CATEGORIES } from "../../proto/error-categories.js";
import { errorCode, SandboxError } from "../sandbox-error.js";

/**
 * The errors of external parties and interactive submission, with Canton 3.5's codes and cause
 * texts (CommandExecutionErrors, TransactionProcessor, TopologyManagerError,
 * TransactionRoutingError).
 */
const CODES = {
  FAILED_TO_PREPARE_TRANSACTION: errorCode(
    "FAILED_TO_PREPARE_TRANSACTION",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  FAILED_TO_EXECUTE_TRANSACTION: errorCode(
    "FAILED_TO_EXECUTE_TRANSACTION",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  INVALID_EXTERNAL_TRANSACTION: errorCode(
    "INVALID_EXTERNAL_TRANSACTION",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  // Alarms: Canton redacts their cause and code from the client.
  TOPOLOGY_INVALID_TX_SIGNATURE: errorCode("TOPOLOGY_INVALID_TX_SIGNATURE", ERROR_CATEGORIES.SecurityAlert),
  TOPOLOGY_UNAUTHORIZED_TRANSACTION: errorCode(
    "TOPOLOGY_UNAUTHORIZED_TRANSACTION",
    ERROR_CATEGORIES.SecurityAlert,
  ),
  LEDGER_TIME_OUTSIDE_BOUNDS: errorCode(
    "LEDGER_TIME_OUTSIDE_BOUNDS",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  LOCAL_VERDICT_MAX_RECORD_TIME_EXCEEDED: errorCode(
    "LOCAL_VERDICT_MAX_RECORD_TIME_EXCEEDED",
    ERROR_CATEGORIES.ContentionOnSharedResources,
  ),
  NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT: errorCode(
    "NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
} as const;

const definite = { definiteAnswer: true };
const range = (min: Date | undefined, max: Date | undefined) =>
  `Range(${min?.toISOString() ?? "-"}, ${max?.toISOString() ?? "-"})`;

export const interactiveErrors = {
  prepareFailed: (reason: string) =>
    new SandboxError(
      CODES.FAILED_TO_PREPARE_TRANSACTION,
      `The participant failed to prepare the transaction: ${reason}`,
      { definiteAnswer: false },
    ),
  executeFailed: (reason: string) =>
    new SandboxError(
      CODES.FAILED_TO_EXECUTE_TRANSACTION,
      `The participant failed to execute the transaction: ${reason}`,
      { definiteAnswer: false },
    ),
  invalidExternalTransaction: (details: string) =>
    new SandboxError(
      CODES.INVALID_EXTERNAL_TRANSACTION,
      `Provided external transaction is invalid: ${details}`,
      definite,
    ),
  invalidTopologySignature: () =>
    new SandboxError(CODES.TOPOLOGY_INVALID_TX_SIGNATURE, "Transaction signature verification failed"),
  unauthorizedTopology: (namespaces: readonly string[], keys: readonly string[]) =>
    new SandboxError(
      CODES.TOPOLOGY_UNAUTHORIZED_TRANSACTION,
      `Topology transaction is missing authorizations by namespaces=${namespaces.join(",")} and keys=${keys.join(",")}`,
    ),
  ledgerTimeOutsideBounds: (ledgerTime: Date, min: Date | undefined, max: Date | undefined) =>
    new SandboxError(
      CODES.LEDGER_TIME_OUTSIDE_BOUNDS,
      `The submitted command with a ledger effective time of ${ledgerTime.toISOString()} is outside of the bounds required by the transaction ${range(min, max)}`,
      {
        context: { ledger_effective_time: ledgerTime.toISOString(), time_boundaries: range(min, max) },
        ...definite,
      },
    ),
  maxRecordTimeExceeded: (recordTime: Date, maxRecordTime: Date) =>
    new SandboxError(
      CODES.LOCAL_VERDICT_MAX_RECORD_TIME_EXCEEDED,
      `Rejected transaction as record time exceeds the maximum record time: the record time ${recordTime.toISOString()} exceeds the maximum record time ${maxRecordTime.toISOString()}`,
      definite,
    ),
  noSynchronizerForSubmitters: (parties: readonly string[]) =>
    new SandboxError(
      CODES.NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT,
      "Not connected to a synchronizer on which this participant can submit for all submitters",
      { resources: parties.map((p) => ["PARTY", p] as const), definiteAnswer: false },
    ),
};
