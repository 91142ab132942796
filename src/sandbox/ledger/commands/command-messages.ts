/**
 * Request shapes of the command and read services as @grpc/proto-loader hands them over with
 * PROTO_OPTIONS (camelCase, int64 as strings, absent messages null, oneofs naming their case).
 * Only the fields the ledger reads are declared.
 */
import type { LedgerIdentifier, LedgerValue } from "../../../lf/index.js";

export interface DurationMessage {
  seconds: string;
  nanos: number;
}

export interface CreateCommandMessage {
  templateId: LedgerIdentifier | null;
  createArguments: {
    recordId: LedgerIdentifier | null;
    fields: { label: string; value: LedgerValue | null }[];
  } | null;
}

export interface ExerciseCommandMessage {
  templateId: LedgerIdentifier | null;
  contractId: string;
  choice: string;
  choiceArgument: LedgerValue | null;
}

export interface ExerciseByKeyCommandMessage {
  templateId: LedgerIdentifier | null;
  contractKey: LedgerValue | null;
  choice: string;
  choiceArgument: LedgerValue | null;
}

export interface CreateAndExerciseCommandMessage {
  templateId: LedgerIdentifier | null;
  createArguments: CreateCommandMessage["createArguments"];
  choice: string;
  choiceArgument: LedgerValue | null;
}

export interface CommandMessage {
  command?: "create" | "exercise" | "exerciseByKey" | "createAndExercise";
  create?: CreateCommandMessage | null;
  exercise?: ExerciseCommandMessage | null;
  exerciseByKey?: ExerciseByKeyCommandMessage | null;
  createAndExercise?: CreateAndExerciseCommandMessage | null;
}

export interface DisclosedContractMessage {
  templateId: LedgerIdentifier | null;
  contractId: string;
  createdEventBlob: Buffer;
  synchronizerId: string;
}

export interface CommandsMessage {
  workflowId: string;
  userId: string;
  commandId: string;
  commands: CommandMessage[];
  deduplicationPeriod?: "deduplicationDuration" | "deduplicationOffset";
  deduplicationDuration?: DurationMessage | null;
  deduplicationOffset?: string;
  actAs: string[];
  readAs: string[];
  submissionId: string;
  disclosedContracts: DisclosedContractMessage[];
  synchronizerId: string;
}

export interface FiltersMessage {
  cumulative: CumulativeFilterMessage[];
}

export interface CumulativeFilterMessage {
  identifierFilter?: "wildcardFilter" | "interfaceFilter" | "templateFilter";
  wildcardFilter?: { includeCreatedEventBlob: boolean } | null;
  interfaceFilter?: {
    interfaceId: LedgerIdentifier | null;
    includeInterfaceView: boolean;
    includeCreatedEventBlob: boolean;
  } | null;
  templateFilter?: { templateId: LedgerIdentifier | null; includeCreatedEventBlob: boolean } | null;
}

export interface EventFormatMessage {
  filtersByParty: Record<string, FiltersMessage>;
  filtersForAnyParty: FiltersMessage | null;
  verbose: boolean;
}

export type TransactionShapeName =
  | "TRANSACTION_SHAPE_UNSPECIFIED"
  | "TRANSACTION_SHAPE_ACS_DELTA"
  | "TRANSACTION_SHAPE_LEDGER_EFFECTS";

export interface TransactionFormatMessage {
  eventFormat: EventFormatMessage | null;
  transactionShape: TransactionShapeName;
}

export interface UpdateFormatMessage {
  includeTransactions: TransactionFormatMessage | null;
  includeReassignments: EventFormatMessage | null;
  includeTopologyEvents: {
    includeParticipantAuthorizationEvents: { parties: string[] } | null;
  } | null;
}
