import type { LedgerValue, TypeConName } from "../lf/index.js";
import type {
  Identifier,
  Status,
  Timestamp,
  Timestamp__Output,
  Value,
  Value__Output,
} from "../proto/ledger-api-types.js";

/** Small pieces of outgoing messages, and the bridge from decoded values to the value codec. */

export function timestamp(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}

/** A request's timestamp as a Date; undefined when the field is absent. */
export function dateOf(ts: Timestamp__Output | null): Date | undefined {
  return ts === null ? undefined : new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1_000_000));
}

export function identifier(id: TypeConName): Identifier {
  return { packageId: id.packageId, moduleName: id.moduleName, entityName: id.entityName };
}

export const OK_STATUS: Status = { code: 0, message: "", details: [] };

/**
 * A decoded Value as the value codec reads it. proto-loader (oneofs: true) sets exactly the one
 * case the oneof names, which is the shape LedgerValue spells out as a union.
 */
export function ledgerValue(value: Value__Output): LedgerValue;
export function ledgerValue(value: Value__Output | null): LedgerValue | null;
export function ledgerValue(value: Value__Output | null): LedgerValue | null {
  return value as LedgerValue | null;
}

/** A value the ledger keeps, in an outgoing message: LedgerValue is Value with read-only arrays. */
export const valueMessage = (value: LedgerValue): Value => value as Value;
