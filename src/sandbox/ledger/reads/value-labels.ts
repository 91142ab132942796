import type { LedgerRecordField, LedgerValue } from "../../../lf/index.js";

/**
 * Non-verbose values: Canton leaves record labels out unless `verbose` is asked for. The ledger
 * keeps values labelled and strips labels on the way out; the stripped copy is made once per
 * value object and remembered, since the same contract is streamed many times.
 */
const stripped = new WeakMap<object, LedgerValue>();

export function withoutLabels(value: LedgerValue): LedgerValue {
  const cached = stripped.get(value);
  if (cached !== undefined) return cached;
  const result = strip(value);
  stripped.set(value, result);
  return result;
}

function strip(value: LedgerValue): LedgerValue {
  const v = value as Record<string, unknown>;
  if (v.record != null) {
    const record = v.record as { fields: readonly LedgerRecordField[] };
    return {
      record: {
        recordId: null,
        fields: record.fields.map((f) => ({ label: "", value: f.value === null ? null : strip(f.value) })),
      },
    };
  }
  if (v.list != null) {
    return { list: { elements: (v.list as { elements: LedgerValue[] }).elements.map(strip) } };
  }
  if (v.optional != null) {
    const inner = (v.optional as { value: LedgerValue | null }).value;
    return { optional: { value: inner == null ? null : strip(inner) } };
  }
  if (v.textMap != null) {
    const entries = (v.textMap as { entries: { key: string; value: LedgerValue | null }[] }).entries;
    return { textMap: { entries: entries.map((e) => ({ key: e.key, value: e.value && strip(e.value) })) } };
  }
  if (v.genMap != null) {
    const entries = (v.genMap as { entries: { key: LedgerValue | null; value: LedgerValue | null }[] })
      .entries;
    return {
      genMap: {
        entries: entries.map((e) => ({ key: e.key && strip(e.key), value: e.value && strip(e.value) })),
      },
    };
  }
  if (v.variant != null) {
    const variant = v.variant as { constructor: string; value: LedgerValue | null };
    return {
      variant: {
        variantId: null,
        constructor: variant.constructor,
        value: variant.value && strip(variant.value),
      },
    };
  }
  return value;
}
