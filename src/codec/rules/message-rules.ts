import { LEDGER_API_PACKAGE } from "../../proto/ledger-api-protos.js";
import type {
  Command__Output,
  CreateAndExerciseCommand__Output,
  CreateCommand__Output,
  CreatedEvent__Output,
  Event__Output,
  ExecuteSubmissionAndWaitForTransactionRequest__Output,
  ExecuteSubmissionAndWaitRequest__Output,
  ExecuteSubmissionRequest__Output,
  ExerciseByKeyCommand__Output,
  ExerciseCommand__Output,
  ExercisedEvent__Output,
  GetActiveContractsResponse__Output,
  InterfaceView__Output,
  PrefetchContractKey__Output,
  PrepareSubmissionResponse__Output,
  ReassignmentEvent__Output,
} from "../../proto/ledger-api-types.js";
import type { WellKnownKind } from "./well-known.js";

/**
 * The one table of the JSON Ledger API's own rules: every message whose JSON is not the
 * plain protobuf mapping (message-layout.ts states that mapping), with Canton's Js* shape.
 * Both directions of the object path (object-codec) and the wire path (stream transcoder)
 * read it; a rule declared here holds everywhere.
 */

/** How one oneof case is keyed: by `key`, its content under `value` (wrapped) or directly. */
export interface CaseRule {
  readonly key: string;
  readonly wrapped: boolean;
}

interface OneofRule<F extends string = string> {
  /** Cases the Js* schema renames, by field name; the rest are PascalCase and wrapped. */
  readonly cases: Readonly<Partial<Record<F, CaseRule>>>;
  /** The key of an unset oneof (default `Empty`). */
  readonly emptyKey?: string;
  /** The message is its oneof's object alone (`Event` -> `{"CreatedEvent": {...}}`). */
  readonly flatten?: boolean;
}

/** The ValueCodec entry point that types a Daml value (see src/lf/value-codec.ts). */
export type TypedCodecName =
  | "templatePayload"
  | "contractKey"
  | "interfaceView"
  | "choiceArgument"
  | "choiceResult";

/** A field holding a Daml value (a Value or Record message), typed by the package signatures. */
export interface DamlFieldRule<F extends string = string> {
  readonly field: F;
  /** Its JSON key when the Js* schema renames it. */
  readonly jsonKey?: string;
  /** A Record message (create arguments, views); else a Value. */
  readonly record?: boolean;
  readonly codec: TypedCodecName;
  /** Identifier fields naming the template or interface: the first one set is used. */
  readonly owner: readonly F[];
  /** The string field naming the choice (choice codecs). */
  readonly choice?: F;
  /** Left out when absent; else always converted (an absent value is the codec's error). */
  readonly whenSet?: boolean;
}

export interface MessageRule<F extends string = string> {
  /** A type whose JSON is written by hand on both paths (well-known.ts). */
  readonly wellKnown?: WellKnownKind;
  /** The message's single real oneof. */
  readonly oneof?: OneofRule<F>;
  /**
   * Written after the other members, in this order; all name the same owner and choice, so
   * one lookup per message finds their types.
   */
  readonly daml?: readonly DamlFieldRule<F>[];
  /**
   * Message fields the Js* schema carries as the base64 of their protobuf serialization, not
   * as JSON (the PreparedTransaction of interactive submission: the client hashes and signs
   * exactly what it received).
   */
  readonly serialized?: readonly F[];
}

const V2 = LEDGER_API_PACKAGE;

/** A rule checked against the generated type of its message (field names). */
const js = <M>(rule: MessageRule<Extract<keyof M, string>>): MessageRule => rule as MessageRule;
const bare = (key: string): CaseRule => ({ key, wrapped: false });
const wrapped = (key: string): CaseRule => ({ key, wrapped: true });

export const MESSAGE_RULES: Readonly<Record<string, MessageRule>> = {
  "google.protobuf.Timestamp": { wellKnown: "timestamp" },
  "google.protobuf.Empty": { wellKnown: "empty" },
  "google.protobuf.Any": { wellKnown: "protoAny" },
  [`${V2}.Identifier`]: { wellKnown: "identifier" },
  // Daml values reach JSON only through the typed fields below.
  [`${V2}.Value`]: { wellKnown: "untypedValue" },
  [`${V2}.Record`]: { wellKnown: "untypedValue" },

  [`${V2}.Event`]: js<Event__Output>({
    oneof: {
      flatten: true,
      cases: {
        created: bare("CreatedEvent"),
        archived: bare("ArchivedEvent"),
        exercised: bare("ExercisedEvent"),
      },
    },
  }),
  [`${V2}.ReassignmentEvent`]: js<ReassignmentEvent__Output>({
    oneof: {
      flatten: true,
      cases: { assigned: bare("JsAssignmentEvent"), unassigned: wrapped("JsUnassignedEvent") },
    },
  }),
  [`${V2}.GetActiveContractsResponse`]: js<GetActiveContractsResponse__Output>({
    oneof: {
      cases: {
        activeContract: bare("JsActiveContract"),
        incompleteUnassigned: bare("JsIncompleteUnassigned"),
        incompleteAssigned: bare("JsIncompleteAssigned"),
      },
      emptyKey: "JsEmpty",
    },
  }),
  [`${V2}.CreatedEvent`]: js<CreatedEvent__Output>({
    daml: [
      {
        field: "createArguments",
        jsonKey: "createArgument",
        record: true,
        codec: "templatePayload",
        owner: ["templateId"],
      },
      { field: "contractKey", codec: "contractKey", owner: ["templateId"], whenSet: true },
    ],
  }),
  [`${V2}.InterfaceView`]: js<InterfaceView__Output>({
    daml: [
      { field: "viewValue", record: true, codec: "interfaceView", owner: ["interfaceId"], whenSet: true },
    ],
  }),
  [`${V2}.ExercisedEvent`]: js<ExercisedEvent__Output>({
    daml: [
      {
        field: "choiceArgument",
        codec: "choiceArgument",
        owner: ["interfaceId", "templateId"],
        choice: "choice",
      },
      {
        field: "exerciseResult",
        codec: "choiceResult",
        owner: ["interfaceId", "templateId"],
        choice: "choice",
        whenSet: true,
      },
    ],
  }),

  [`${V2}.Command`]: js<Command__Output>({
    oneof: {
      flatten: true,
      cases: {
        create: bare("CreateCommand"),
        exercise: bare("ExerciseCommand"),
        exerciseByKey: bare("ExerciseByKeyCommand"),
        createAndExercise: bare("CreateAndExerciseCommand"),
      },
    },
  }),
  [`${V2}.CreateCommand`]: js<CreateCommand__Output>({
    daml: [{ field: "createArguments", record: true, codec: "templatePayload", owner: ["templateId"] }],
  }),
  [`${V2}.ExerciseCommand`]: js<ExerciseCommand__Output>({
    daml: [{ field: "choiceArgument", codec: "choiceArgument", owner: ["templateId"], choice: "choice" }],
  }),
  [`${V2}.ExerciseByKeyCommand`]: js<ExerciseByKeyCommand__Output>({
    daml: [
      { field: "contractKey", codec: "contractKey", owner: ["templateId"], choice: "choice" },
      { field: "choiceArgument", codec: "choiceArgument", owner: ["templateId"], choice: "choice" },
    ],
  }),
  [`${V2}.CreateAndExerciseCommand`]: js<CreateAndExerciseCommand__Output>({
    daml: [
      {
        field: "createArguments",
        record: true,
        codec: "templatePayload",
        owner: ["templateId"],
        choice: "choice",
      },
      { field: "choiceArgument", codec: "choiceArgument", owner: ["templateId"], choice: "choice" },
    ],
  }),
  [`${V2}.PrefetchContractKey`]: js<PrefetchContractKey__Output>({
    daml: [{ field: "contractKey", codec: "contractKey", owner: ["templateId"] }],
  }),

  [`${V2}.interactive.PrepareSubmissionResponse`]: js<PrepareSubmissionResponse__Output>({
    serialized: ["preparedTransaction"],
  }),
  [`${V2}.interactive.ExecuteSubmissionRequest`]: js<ExecuteSubmissionRequest__Output>({
    serialized: ["preparedTransaction"],
  }),
  [`${V2}.interactive.ExecuteSubmissionAndWaitRequest`]: js<ExecuteSubmissionAndWaitRequest__Output>({
    serialized: ["preparedTransaction"],
  }),
  [`${V2}.interactive.ExecuteSubmissionAndWaitForTransactionRequest`]:
    js<ExecuteSubmissionAndWaitForTransactionRequest__Output>({ serialized: ["preparedTransaction"] }),
};
