/**
 * The two sides of the value codec.
 *
 * `LedgerValue` is com.daml.ledger.api.v2.Value as @grpc/proto-loader hands it over and
 * accepts it with {keepCase: false, longs: String, enums: String, defaults: true,
 * oneofs: true}: one case property per object (int64 and timestamp as decimal strings).
 * Decoded objects also carry a virtual `sum` naming the case; it is never required.
 */

export interface LedgerIdentifier {
  readonly packageId: string;
  readonly moduleName: string;
  readonly entityName: string;
}

export interface LedgerRecordField {
  readonly label: string;
  readonly value: LedgerValue | null;
}

export interface LedgerRecord {
  readonly recordId: LedgerIdentifier | null;
  readonly fields: readonly LedgerRecordField[];
}

export interface LedgerMapEntry<K> {
  readonly key: K;
  readonly value: LedgerValue | null;
}

export type LedgerValue = { readonly sum?: string } & (
  | { readonly unit: Record<string, never> }
  | { readonly bool: boolean }
  | { readonly int64: string | number }
  | { readonly date: number }
  | { readonly timestamp: string | number }
  | { readonly numeric: string }
  | { readonly party: string }
  | { readonly text: string }
  | { readonly contractId: string }
  | { readonly optional: { readonly value: LedgerValue | null } }
  | { readonly list: { readonly elements: readonly LedgerValue[] } }
  | { readonly textMap: { readonly entries: readonly LedgerMapEntry<string>[] } }
  | { readonly genMap: { readonly entries: readonly LedgerMapEntry<LedgerValue | null>[] } }
  | { readonly record: LedgerRecord }
  | {
      readonly variant: {
        readonly variantId: LedgerIdentifier | null;
        readonly constructor: string;
        readonly value: LedgerValue | null;
      };
    }
  | { readonly enum: { readonly enumId: LedgerIdentifier | null; readonly constructor: string } }
);

/**
 * Every case at once, all optional: how the codec reads a value whose case it already
 * knows from the signature (one property read instead of a switch on `sum`).
 */
export interface LedgerValueView {
  readonly sum?: string;
  readonly unit?: object | null;
  readonly bool?: boolean;
  readonly int64?: string | number;
  readonly date?: number;
  readonly timestamp?: string | number;
  readonly numeric?: string;
  readonly party?: string;
  readonly text?: string;
  readonly contractId?: string;
  readonly optional?: { readonly value?: LedgerValue | null } | null;
  readonly list?: { readonly elements?: readonly LedgerValue[] } | null;
  readonly textMap?: { readonly entries?: readonly LedgerMapEntry<string>[] } | null;
  readonly genMap?: { readonly entries?: readonly LedgerMapEntry<LedgerValue | null>[] } | null;
  readonly record?: { readonly fields?: readonly LedgerRecordField[] } | null;
  readonly variant?: { readonly constructor?: string; readonly value?: LedgerValue | null } | null;
  readonly enum?: { readonly constructor?: string } | null;
}

/** A JSON document as JSON.parse returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
