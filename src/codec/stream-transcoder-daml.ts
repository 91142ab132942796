import type protobuf from "protobufjs";
import type { TranscodeRun, TypePlan } from "./stream-transcoder-plan.js";
import type { TypedValueWriters } from "./stream-transcoder-values.js";

/**
 * The Js* shapes of daml-json-overrides.ts, for the stream transcoder: the same JSON, from
 * bytes. Event wrappers are plain plans (renamed oneof cases); the events with Daml values
 * write their generic fields in the single pass and leave the values to a tail, which types
 * them with the package signatures straight from their bytes (stream-transcoder-values.ts).
 */

const V2 = "com.daml.ledger.api.v2";

type Reader = protobuf.Reader;

const bare = (key: string) => ({ key, wrapped: false });

export function damlTypePlans(
  root: protobuf.Root,
  typed: TypedValueWriters,
  run: TranscodeRun,
): Record<string, TypePlan> {
  const created = new FieldPositions(root, "CreatedEvent", ["templateId", "createArguments", "contractKey"]);
  const view = new FieldPositions(root, "InterfaceView", ["interfaceId", "viewValue"]);
  const exercised = new FieldPositions(root, "ExercisedEvent", [
    "templateId",
    "interfaceId",
    "choice",
    "choiceArgument",
    "exerciseResult",
  ]);

  return {
    [`${V2}.Event`]: {
      flatten: true,
      oneofCases: {
        created: bare("CreatedEvent"),
        archived: bare("ArchivedEvent"),
        exercised: bare("ExercisedEvent"),
      },
    },
    [`${V2}.ReassignmentEvent`]: {
      flatten: true,
      oneofCases: {
        assigned: bare("JsAssignmentEvent"),
        unassigned: { key: "JsUnassignedEvent", wrapped: true },
      },
    },
    [`${V2}.GetActiveContractsResponse`]: {
      oneofCases: {
        activeContract: bare("JsActiveContract"),
        incompleteUnassigned: bare("JsIncompleteUnassigned"),
        incompleteAssigned: bare("JsIncompleteAssigned"),
      },
      emptyKey: "JsEmpty",
    },
    [`${V2}.CreatedEvent`]: {
      skip: ["createArguments", "contractKey"],
      tail: (r, start, end, w) => {
        // A missing package fails the whole element; the caller loads it and comes back.
        if (run.missing.length === 0) {
          const at = created.scan(r, start, end);
          typed.created(r, at[0] as number, at[1] as number, at[2] as number, w);
        }
        r.pos = end;
      },
    },
    [`${V2}.InterfaceView`]: {
      skip: ["viewValue"],
      tail: (r, start, end, w) => {
        if (run.missing.length === 0) {
          const at = view.scan(r, start, end);
          typed.view(r, at[0] as number, at[1] as number, w);
        }
        r.pos = end;
      },
    },
    [`${V2}.ExercisedEvent`]: {
      skip: ["choiceArgument", "exerciseResult"],
      tail: (r, start, end, w) => {
        if (run.missing.length === 0) {
          const at = exercised.scan(r, start, end);
          const owner = (at[1] as number) >= 0 ? (at[1] as number) : (at[0] as number);
          typed.exercised(r, owner, at[2] as number, at[3] as number, at[4] as number, w);
        }
        r.pos = end;
      },
    },
  };
}

/**
 * Where some fields of a message start (their length prefix, just after their tag; the last
 * occurrence wins, as in protobufjs), -1 when absent. One instance per message type: a tail runs after its
 * message's fields, so scans of one type never overlap.
 */
class FieldPositions {
  private readonly slots: number[] = [];
  private readonly positions: Int32Array;

  constructor(root: protobuf.Root, typeName: string, fields: readonly string[]) {
    const type = root.lookupType(`${V2}.${typeName}`);
    fields.forEach((name, slot) => {
      const field = type.fields[name];
      if (!field) throw new Error(`${typeName} has no field ${name}`);
      this.slots[field.id] = slot;
    });
    this.positions = new Int32Array(fields.length);
  }

  scan(r: Reader, start: number, end: number): Int32Array {
    const positions = this.positions;
    positions.fill(-1);
    r.pos = start;
    while (r.pos < end) {
      const tag = r.uint32();
      const slot = this.slots[tag >>> 3];
      if (slot !== undefined) positions[slot] = r.pos;
      r.skipType(tag & 7);
    }
    return positions;
  }
}
