import type protobuf from "protobufjs";
import type { LedgerRecord, LedgerValue, ValueCodec } from "../lf/index.js";
import type { TranscodeRun, TypePlan } from "./stream-transcoder-plan.js";
import { type LedgerId, readIdentifier } from "./stream-transcoder-well-known.js";

/**
 * The Js* shapes of daml-json-overrides.ts, for the stream transcoder: the same JSON, from
 * bytes. Event wrappers are plain plans (renamed oneof cases); the events with Daml values
 * write their generic fields in the single pass and leave the values to a tail, which
 * decodes only those submessages (protobufjs, proto-loader shape) and types them with the
 * package signatures, as the object path does.
 */

const V2 = "com.daml.ledger.api.v2";

/** What @grpc/proto-loader hands the object path (PROTO_OPTIONS), for the value codec. */
export const DECODED_OBJECT: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

type Reader = protobuf.Reader;

const bare = (key: string) => ({ key, wrapped: false });

export function damlTypePlans(
  root: protobuf.Root,
  values: ValueCodec,
  run: TranscodeRun,
): Record<string, TypePlan> {
  const valueType = root.lookupType(`${V2}.Value`);
  const recordType = root.lookupType(`${V2}.Record`);
  const decode = (type: protobuf.Type, r: Reader, at: number): unknown => {
    if (at < 0) return null;
    r.pos = at;
    const length = r.uint32();
    return type.toObject(type.decode(r, length), DECODED_OBJECT);
  };
  const identifierAt = (r: Reader, at: number): LedgerId | null => {
    if (at < 0) return null;
    r.pos = at;
    const length = r.uint32();
    return readIdentifier(r, r.pos + length);
  };
  const stringAt = (r: Reader, at: number): string => {
    if (at < 0) return "";
    r.pos = at;
    return r.string();
  };
  const typed = (json: unknown) => JSON.stringify(json);

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
      tail: (r, start, end) => {
        // A missing package fails the whole element; the caller loads it and comes back.
        if (run.missing.length > 0) return skipTo(r, end);
        const at = created.scan(r, start, end);
        const templateId = identifierAt(r, at[0] as number) as LedgerId;
        const record = decode(recordType, r, at[1] as number) as LedgerRecord;
        const key = decode(valueType, r, at[2] as number) as LedgerValue | null;
        r.pos = end;
        let out = `"createArgument":${typed(values.templatePayload(templateId).toJson({ record }))}`;
        if (key) out += `,"contractKey":${typed(values.contractKey(templateId).toJson(key))}`;
        return out;
      },
    },
    [`${V2}.InterfaceView`]: {
      skip: ["viewValue"],
      tail: (r, start, end) => {
        if (run.missing.length > 0) return skipTo(r, end);
        const at = view.scan(r, start, end);
        const interfaceId = identifierAt(r, at[0] as number) as LedgerId;
        const record = decode(recordType, r, at[1] as number) as LedgerRecord | null;
        r.pos = end;
        return record ? `"viewValue":${typed(values.interfaceView(interfaceId).toJson({ record }))}` : "";
      },
    },
    [`${V2}.ExercisedEvent`]: {
      skip: ["choiceArgument", "exerciseResult"],
      tail: (r, start, end) => {
        if (run.missing.length > 0) return skipTo(r, end);
        const at = exercised.scan(r, start, end);
        const owner = (identifierAt(r, at[1] as number) ?? identifierAt(r, at[0] as number)) as LedgerId;
        const choice = stringAt(r, at[2] as number);
        const argument = decode(valueType, r, at[3] as number) as LedgerValue;
        const result = decode(valueType, r, at[4] as number) as LedgerValue | null;
        r.pos = end;
        let out = `"choiceArgument":${typed(values.choiceArgument(owner, choice).toJson(argument))}`;
        if (result) out += `,"exerciseResult":${typed(values.choiceResult(owner, choice).toJson(result))}`;
        return out;
      },
    },
  };
}

function skipTo(r: Reader, end: number): string {
  r.pos = end;
  return "";
}

/**
 * Where some fields of a message start (just after their tag; the last occurrence wins, as
 * in protobufjs), -1 when absent. One instance per message type: a tail runs after its
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
