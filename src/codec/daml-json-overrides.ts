import type { LedgerRecord, LedgerValue, TypeConName, ValueCodec } from "../lf/index.js";
import { childPath, describeJson, InvalidJsonError } from "./json-path.js";
import type { MessageOverride, ProtoJsonCodec } from "./proto-json.js";
import { splitIdentifier } from "./proto-json.js";

/**
 * The messages whose JSON Canton shapes by hand (the `Js*` schemas): Daml values typed by
 * the package signatures, and a few oneofs written without the `value` wrapper and keyed by
 * message name (`{"CreatedEvent": {...}}`, `{"CreateCommand": {...}}`, `{"JsActiveContract": {...}}`).
 */
const V2 = "com.daml.ledger.api.v2";

type Message = Record<string, unknown>;
type LedgerId = { packageId: string; moduleName: string; entityName: string };

/** Per request: what `#package-name` references resolved to (commands only). */
export interface CommandContext {
  /** The package id to read signatures from for this (possibly `#name`) package reference. */
  packageIdOf(reference: string): string;
}

export function damlJsonOverrides(
  codec: () => ProtoJsonCodec,
  values: ValueCodec,
): Record<string, MessageOverride> {
  const generic = (name: string, message: unknown) => codec().genericToJson(`${V2}.${name}`, message);
  const nested = (name: string, message: unknown) => codec().toJson(`${V2}.${name}`, message);
  const fromGeneric = (name: string, json: unknown, path: string, context: unknown) =>
    codec().genericFromJson(`${V2}.${name}`, json, path, context);
  const record = (r: unknown): LedgerValue => ({ record: r as LedgerRecord });

  return {
    [`${V2}.Record`]: { toJson: untypedValue, fromJson: untypedValueInput },
    [`${V2}.Value`]: { toJson: untypedValue, fromJson: untypedValueInput },

    [`${V2}.CreatedEvent`]: {
      toJson: (m) => {
        const event = m as Message & { templateId: LedgerId; createArguments: unknown; contractKey: unknown };
        const out = generic("CreatedEvent", { ...event, createArguments: null, contractKey: null });
        out.createArgument = values.templatePayload(event.templateId).toJson(record(event.createArguments));
        if (event.contractKey) {
          out.contractKey = values.contractKey(event.templateId).toJson(event.contractKey as LedgerValue);
        }
        return out;
      },
    },
    [`${V2}.InterfaceView`]: {
      toJson: (m) => {
        const view = m as Message & { interfaceId: LedgerId; viewValue: unknown };
        const out = generic("InterfaceView", { ...view, viewValue: null });
        if (view.viewValue)
          out.viewValue = values.interfaceView(view.interfaceId).toJson(record(view.viewValue));
        return out;
      },
    },
    [`${V2}.ExercisedEvent`]: {
      toJson: (m) => {
        const event = m as Message & {
          templateId: LedgerId;
          interfaceId: LedgerId | null;
          choice: string;
          choiceArgument: unknown;
          exerciseResult: unknown;
        };
        const out = generic("ExercisedEvent", { ...event, choiceArgument: null, exerciseResult: null });
        const owner = event.interfaceId ?? event.templateId;
        out.choiceArgument = values
          .choiceArgument(owner, event.choice)
          .toJson(event.choiceArgument as LedgerValue);
        if (event.exerciseResult) {
          out.exerciseResult = values
            .choiceResult(owner, event.choice)
            .toJson(event.exerciseResult as LedgerValue);
        }
        return out;
      },
    },
    [`${V2}.Event`]: {
      toJson: (m) => {
        const event = m as { created?: unknown; archived?: unknown; exercised?: unknown };
        if (event.created) return { CreatedEvent: nested("CreatedEvent", event.created) };
        if (event.exercised) return { ExercisedEvent: nested("ExercisedEvent", event.exercised) };
        return { ArchivedEvent: nested("ArchivedEvent", event.archived) };
      },
    },
    [`${V2}.GetActiveContractsResponse`]: {
      toJson: (m) => {
        const response = m as Message & {
          activeContract?: unknown;
          incompleteUnassigned?: unknown;
          incompleteAssigned?: unknown;
        };
        const out = generic("GetActiveContractsResponse", response);
        if (response.activeContract)
          out.contractEntry = { JsActiveContract: nested("ActiveContract", response.activeContract) };
        else if (response.incompleteUnassigned) {
          out.contractEntry = {
            JsIncompleteUnassigned: nested("IncompleteUnassigned", response.incompleteUnassigned),
          };
        } else if (response.incompleteAssigned) {
          out.contractEntry = {
            JsIncompleteAssigned: nested("IncompleteAssigned", response.incompleteAssigned),
          };
        } else out.contractEntry = { JsEmpty: {} };
        return out;
      },
    },
    [`${V2}.ReassignmentEvent`]: {
      toJson: (m) => {
        const event = m as { assigned?: unknown; unassigned?: unknown };
        if (event.assigned) return { JsAssignmentEvent: nested("AssignedEvent", event.assigned) };
        return { JsUnassignedEvent: { value: nested("UnassignedEvent", event.unassigned) } };
      },
    },

    [`${V2}.Command`]: {
      fromJson: (json, path, context) => {
        const [caseName, content] = singleCase(json, path, COMMAND_CASES);
        const here = childPath(path, caseName);
        const { field, message } = COMMAND_CASES[caseName] as { field: string; message: string };
        return { [field]: codec().fromJson(`${V2}.${message}`, content, here, context) };
      },
    },
    [`${V2}.CreateCommand`]: {
      fromJson: (json, path, context) => {
        const out = fromGeneric(
          "CreateCommand",
          { ...asObject(json, path), createArguments: null },
          path,
          context,
        );
        const template = typeCon(out.templateId, context);
        out.createArguments = recordOf(
          values.templatePayload(template),
          field(json, "createArguments"),
          path,
        );
        return out;
      },
    },
    [`${V2}.ExerciseCommand`]: {
      fromJson: (json, path, context) => {
        const out = fromGeneric(
          "ExerciseCommand",
          { ...asObject(json, path), choiceArgument: null },
          path,
          context,
        );
        const owner = typeCon(out.templateId, context);
        const argument = values.choiceArgument(owner, String(out.choice ?? ""));
        out.choiceArgument = argument.toValue(
          field(json, "choiceArgument"),
          childPath(path, "choiceArgument"),
        );
        return out;
      },
    },
    [`${V2}.ExerciseByKeyCommand`]: {
      fromJson: (json, path, context) => {
        const object = { ...asObject(json, path), contractKey: null, choiceArgument: null };
        const out = fromGeneric("ExerciseByKeyCommand", object, path, context);
        const template = typeCon(out.templateId, context);
        out.contractKey = values
          .contractKey(template)
          .toValue(field(json, "contractKey"), childPath(path, "contractKey"));
        const argument = values.choiceArgument(template, String(out.choice ?? ""));
        out.choiceArgument = argument.toValue(
          field(json, "choiceArgument"),
          childPath(path, "choiceArgument"),
        );
        return out;
      },
    },
    [`${V2}.CreateAndExerciseCommand`]: {
      fromJson: (json, path, context) => {
        const object = { ...asObject(json, path), createArguments: null, choiceArgument: null };
        const out = fromGeneric("CreateAndExerciseCommand", object, path, context);
        const template = typeCon(out.templateId, context);
        out.createArguments = recordOf(
          values.templatePayload(template),
          field(json, "createArguments"),
          path,
        );
        const argument = values.choiceArgument(template, String(out.choice ?? ""));
        out.choiceArgument = argument.toValue(
          field(json, "choiceArgument"),
          childPath(path, "choiceArgument"),
        );
        return out;
      },
    },
    [`${V2}.PrefetchContractKey`]: {
      fromJson: (json, path, context) => {
        const out = fromGeneric(
          "PrefetchContractKey",
          { ...asObject(json, path), contractKey: null },
          path,
          context,
        );
        const template = typeCon(out.templateId, context);
        out.contractKey = values
          .contractKey(template)
          .toValue(field(json, "contractKey"), childPath(path, "contractKey"));
        return out;
      },
    },
  };
}

const COMMAND_CASES: Record<string, { field: string; message: string }> = {
  CreateCommand: { field: "create", message: "CreateCommand" },
  ExerciseCommand: { field: "exercise", message: "ExerciseCommand" },
  ExerciseByKeyCommand: { field: "exerciseByKey", message: "ExerciseByKeyCommand" },
  CreateAndExerciseCommand: { field: "createAndExercise", message: "CreateAndExerciseCommand" },
};

function singleCase(json: unknown, path: string, cases: Record<string, unknown>): [string, unknown] {
  const entries =
    json !== null && typeof json === "object" && !Array.isArray(json) ? Object.entries(json) : [];
  const [entry] = entries;
  if (entries.length !== 1 || !entry || !(entry[0] in cases)) {
    throw new InvalidJsonError(
      path,
      `expected an object with exactly one of ${Object.keys(cases).join(", ")}`,
    );
  }
  return entry;
}

function asObject(json: unknown, path: string): Record<string, unknown> {
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new InvalidJsonError(path, `expected an object, got ${describeJson(json)}`);
  }
  return json as Record<string, unknown>;
}

function field(json: unknown, name: string): unknown {
  return (json as Record<string, unknown>)[name];
}

function recordOf(
  codec: { toValue(json: unknown, path?: string): LedgerValue },
  json: unknown,
  path: string,
) {
  const value = codec.toValue(json, childPath(path, "createArguments"));
  return (value as { record: LedgerRecord }).record;
}

/** The signature to type a command's values with: `#name` package references resolved. */
function typeCon(identifier: unknown, context: unknown): TypeConName {
  const id = identifier as LedgerId;
  const packageId = (context as CommandContext | undefined)?.packageIdOf(id.packageId) ?? id.packageId;
  return { packageId, moduleName: id.moduleName, entityName: id.entityName };
}

/** Every Daml value reaches JSON through a typed path; an untyped one is a gateway bug. */
function untypedValue(): never {
  throw new Error("a Daml value reached the JSON codec without its type");
}

function untypedValueInput(_json: unknown, path: string): never {
  throw new InvalidJsonError(path, "a Daml value is not accepted here");
}

/** The template references of a JsCommands body, for resolving `#name` and loading signatures first. */
export function commandTemplateRefs(commands: unknown): string[] {
  const refs = new Set<string>();
  const body = commands as { commands?: unknown; prefetchContractKeys?: unknown } | null;
  for (const command of Array.isArray(body?.commands) ? body.commands : []) {
    if (command === null || typeof command !== "object") continue;
    for (const inner of Object.values(command)) {
      const templateId = (inner as { templateId?: unknown } | null)?.templateId;
      if (typeof templateId === "string") refs.add(templateId);
    }
  }
  for (const prefetch of Array.isArray(body?.prefetchContractKeys) ? body.prefetchContractKeys : []) {
    const templateId = (prefetch as { templateId?: unknown } | null)?.templateId;
    if (typeof templateId === "string") refs.add(templateId);
  }
  return [...refs].flatMap((ref) => {
    const parts = splitIdentifier(ref);
    return parts ? [parts.packageId] : [];
  });
}
