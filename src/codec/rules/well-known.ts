/**
 * Messages whose JSON both paths write by hand, and the formats they share. Each path maps
 * every kind to its own converter (a `Record<WellKnownKind, …>`, so a new kind must be
 * written on both):
 * - timestamp: ISO-8601 text (timestamps.ts);
 * - empty: `{}`;
 * - protoAny: `{typeUrl, value (base64), unknownFields: {fields: {}}}`, Canton's ProtoAny;
 * - identifier: `package:Module:Entity` text;
 * - untypedValue: a Daml Value or Record outside the typed fields of message-rules.ts, which
 *   is a gateway bug on output and not accepted on input.
 */
export type WellKnownKind = "timestamp" | "empty" | "protoAny" | "identifier" | "untypedValue";

/** The member ProtoAny carries after typeUrl and value (a fresh object each time). */
export const protoAnyUnknownFields = (): { fields: Record<string, never> } => ({ fields: {} });

export const UNTYPED_VALUE_OUTPUT = "a Daml value reached the JSON codec without its type";
export const UNTYPED_VALUE_INPUT = "a Daml value is not accepted here";

export interface IdentifierParts {
  packageId: string;
  moduleName: string;
  entityName: string;
}

export function identifierText(id: IdentifierParts): string {
  return `${id.packageId}:${id.moduleName}:${id.entityName}`;
}

/**
 * `pkg:Mod.Sub:Entity` — the package part may itself start with `#` (package-name form). Exactly
 * three parts, as Canton's IdentifierConverter splits them: `a:b:c:d` is malformed (Canton 3.6
 * refuses it with 400, 3.5 failed on it with an internal error), not module `b:c`.
 */
export function splitIdentifier(text: string): IdentifierParts | undefined {
  const first = text.indexOf(":");
  const last = text.lastIndexOf(":");
  if (first <= 0 || last === first || last === text.length - 1) return undefined;
  if (text.indexOf(":", first + 1) !== last) return undefined;
  return {
    packageId: text.slice(0, first),
    moduleName: text.slice(first + 1, last),
    entityName: text.slice(last + 1),
  };
}
