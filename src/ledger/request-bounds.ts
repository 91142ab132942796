import protobuf from "protobufjs";
import { type CantonHttpError, invalidArgumentError, invalidFieldError } from "../errors/index.js";

/**
 * Canton's length limits on the identifiers of a Ledger API request, checked before the request
 * leaves the gateway (facts: daml-lf data Ref and Value.ContractId, Canton's FieldValidator).
 * The ledger checks the grammar itself; the gateway checks only the length, so that an
 * identifier no participant would take never costs a call, and a 100,000-character one is not
 * echoed back at us in an error. An over-long one gets the error Canton answers for it.
 *
 * Every request of every route and stream passes here (LedgerClient), whatever carried the
 * value: path, query or body. Fields are found by name in any message, Daml values included.
 */
interface Bound {
  readonly max: number;
  readonly error: (field: string, value: string) => CantonHttpError;
}

/** Ref.Party: at most 255 characters; Canton's requireParty answers INVALID_ARGUMENT. */
const PARTY: Bound = { max: 255, error: () => invalidArgumentError("Daml-LF Party is too long (max: 255)") };
/** Ref.LedgerString (update ids): INVALID_ARGUMENT from requireLedgerString. */
const LEDGER_STRING: Bound = {
  max: 255,
  error: () => invalidArgumentError("Daml-LF Ledger String is too long (max: 255)"),
};
/** Command, workflow and submission ids, identity provider ids: LedgerStrings checked per field. */
const LEDGER_STRING_FIELD: Bound = {
  max: 255,
  error: (field) => invalidFieldError(field, "Daml-LF Ledger String is too long (max: 255)"),
};
/**
 * ContractId: V1 is `00` + 32-byte discriminator + suffix of at most 94 bytes (254 hex digits),
 * V2 `01` + 12 + at most 33 bytes (92); longer parses as neither.
 */
const CONTRACT_ID: Bound = {
  max: 254,
  error: (field, value) => invalidFieldError(field, `cannot parse ContractId "${value}"`),
};
const USER_ID_PATTERN = "[a-zA-Z0-9@^$.!`\\-#+'~_|:()]{1,128}";
/** Ref.UserId: at most 128 characters. */
const USER_ID: Bound = {
  max: 128,
  error: (field, value) =>
    invalidFieldError(field, `User ID "${value}" does not match regex "${USER_ID_PATTERN}"`),
};

/** By the field's JSON (camelCase) name, in any message. */
const BOUNDS: ReadonlyMap<string, Bound> = new Map([
  ["contractId", CONTRACT_ID],
  ["updateId", LEDGER_STRING],
  ["party", PARTY],
  ["parties", PARTY],
  ["actAs", PARTY],
  ["readAs", PARTY],
  ["partyIdHint", PARTY],
  ["primaryParty", PARTY],
  ["commandId", LEDGER_STRING_FIELD],
  ["workflowId", LEDGER_STRING_FIELD],
  ["submissionId", LEDGER_STRING_FIELD],
  ["identityProviderId", LEDGER_STRING_FIELD],
  ["userId", USER_ID],
]);

/** Map fields whose keys are bounded: the parties of an event format. */
const KEY_BOUNDS: ReadonlyMap<string, Bound> = new Map([["filtersByParty", PARTY]]);

type Check = (message: Record<string, unknown>) => void;

const checks = new Map<protobuf.Type, Check | null>();

/** Throws Canton's error for the first over-long identifier in `request` (a proto-loader object). */
export function checkRequestBounds(type: protobuf.Type, request: object): void {
  checkOf(type)?.(request as Record<string, unknown>);
}

/** The check of a message type, null when no bounded field can occur in it. Compiled once. */
function checkOf(type: protobuf.Type): Check | null {
  const known = checks.get(type);
  if (known !== undefined) return known;
  // A recursive type (Daml values) sees itself as checked while it is compiled.
  let compiled: Check | null = null;
  checks.set(type, (message) => compiled?.(message));
  const steps: Check[] = [];
  for (const field of type.fieldsArray) {
    const step = fieldCheck(field);
    if (step) steps.push(step);
  }
  compiled =
    steps.length === 0
      ? null
      : (message) => {
          for (const step of steps) step(message);
        };
  checks.set(type, compiled);
  return compiled;
}

function fieldCheck(field: protobuf.Field): Check | undefined {
  const name = field.name;
  const snake = snakeCase(name);
  const bound = BOUNDS.get(name);
  const keyBound = KEY_BOUNDS.get(name);
  const resolved = field.resolve().resolvedType;
  const nested = resolved instanceof protobuf.Type ? checkOf(resolved) : null;
  if (field.map) {
    if (!keyBound && !nested) return undefined;
    return (message) => {
      const map = message[name];
      if (map === null || typeof map !== "object") return;
      for (const [key, value] of Object.entries(map)) {
        if (keyBound && key.length > keyBound.max) throw keyBound.error(snake, key);
        if (nested && value !== null && typeof value === "object") nested(value as Record<string, unknown>);
      }
    };
  }
  if (field.type === "string" && bound) {
    const over = (value: unknown) => typeof value === "string" && value.length > bound.max;
    return (message) => {
      const value = message[name];
      if (Array.isArray(value)) {
        for (const item of value) if (over(item)) throw bound.error(snake, item as string);
      } else if (over(value)) throw bound.error(snake, value as string);
    };
  }
  if (!nested) return undefined;
  return (message) => {
    const value = message[name];
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === "object") nested(item);
    } else if (value !== null && typeof value === "object" && !Buffer.isBuffer(value)) {
      nested(value as Record<string, unknown>);
    }
  };
}

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
