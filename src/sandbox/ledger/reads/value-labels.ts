import type { Value } from "../../../proto/ledger-api-types.js";

/**
 * Non-verbose values: Canton leaves record labels out unless `verbose` is asked for. The ledger
 * keeps values labelled and strips labels on the way out; the stripped copy is made once per
 * value object and remembered, since the same contract is streamed many times.
 */
const stripped = new WeakMap<object, Value>();

export function withoutLabels(value: Value): Value {
  const cached = stripped.get(value);
  if (cached !== undefined) return cached;
  const result = strip(value);
  stripped.set(value, result);
  return result;
}

function strip(v: Value): Value {
  if (v.record != null) {
    return {
      record: {
        recordId: null,
        fields: (v.record.fields ?? []).map((f) => ({ label: "", value: f.value ? strip(f.value) : null })),
      },
    };
  }
  if (v.list != null) return { list: { elements: (v.list.elements ?? []).map(strip) } };
  if (v.optional != null) return { optional: { value: v.optional.value ? strip(v.optional.value) : null } };
  if (v.textMap != null) {
    const entries = v.textMap.entries ?? [];
    return {
      textMap: { entries: entries.map((e) => ({ key: e.key, value: e.value ? strip(e.value) : null })) },
    };
  }
  if (v.genMap != null) {
    const entries = v.genMap.entries ?? [];
    return {
      genMap: {
        entries: entries.map((e) => ({
          key: e.key ? strip(e.key) : null,
          value: e.value ? strip(e.value) : null,
        })),
      },
    };
  }
  if (v.variant != null) {
    return {
      variant: {
        variantId: null,
        constructor: v.variant.constructor,
        value: v.variant.value ? strip(v.variant.value) : null,
      },
    };
  }
  return v;
}
