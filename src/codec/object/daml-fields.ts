import type { LedgerRecord, LedgerValue, TypeConName, ValueCodec } from "../../lf/index.js";
import type { Identifier__Output } from "../../proto/ledger-api-types.js";
import type { DamlFieldLayout } from "../rules/message-layout.js";
import { typedCodecOf } from "../rules/typed-codecs.js";
import { childPath } from "./json-path.js";

/**
 * The Daml fields of a message (rules/message-rules.ts) between proto-loader objects and
 * JSON, typed by the package signatures. Written after the message's other members.
 */

type Message = Record<string, unknown>;

/** Per request: what `#package-name` references resolved to (commands only). */
export interface CommandContext {
  /** The package id to read signatures from for this (possibly `#name`) package reference. */
  packageIdOf(reference: string): string;
}

export type DamlFieldsToJson = (message: Message, out: Message, context: unknown) => void;
export type DamlFieldsFromJson = (json: Message, out: Message, path: string, context: unknown) => void;

export function damlFieldsToJson(fields: readonly DamlFieldLayout[], values: ValueCodec): DamlFieldsToJson {
  return (message, out, context) => {
    for (const f of fields) {
      const value = message[f.field];
      // Absent: null (rules/message-layout.ts, writesNullWhenAbsent).
      if (value === undefined || value === null) {
        out[f.key] = null;
        continue;
      }
      const codec = typedCodecOf(values, f.codec, ownerOf(message, f, context), choiceOf(message, f));
      out[f.key] = codec.toJson((f.record ? { record: value as LedgerRecord } : value) as LedgerValue);
    }
  };
}

/** `out` holds the message's other fields already converted (the owner and choice among them). */
export function damlFieldsFromJson(
  fields: readonly DamlFieldLayout[],
  values: ValueCodec,
): DamlFieldsFromJson {
  return (json, out, path, context) => {
    for (const f of fields) {
      const raw = json[f.key];
      if (f.whenSet && raw == null) continue;
      const codec = typedCodecOf(values, f.codec, ownerOf(out, f, context), choiceOf(out, f));
      const value = codec.toValue(raw, childPath(path, f.key));
      out[f.field] = f.record ? (value as { record: LedgerRecord }).record : value;
    }
  };
}

/** The signature to type a value with: the first owner set, `#name` package references resolved. */
function ownerOf(message: Message, f: DamlFieldLayout, context: unknown): TypeConName {
  let id: unknown;
  for (const name of f.owner) {
    id = message[name];
    if (id !== null && id !== undefined) break;
  }
  const ident = id as Identifier__Output;
  const command = context as CommandContext | undefined;
  if (command === undefined) return ident;
  return {
    packageId: command.packageIdOf(ident.packageId),
    moduleName: ident.moduleName,
    entityName: ident.entityName,
  };
}

function choiceOf(message: Message, f: DamlFieldLayout): string {
  return f.choice === undefined ? "" : String(message[f.choice] ?? "");
}
