/**
 * Canton's field-mask semantics for update requests (UpdatePathsTrie, UpdateMapperBase): mask
 * paths are proto field names joined by dots; a path must be a prefix of one of the resource's
 * updatable fields; an exact match updates the field even to its default value, a match through
 * a parent path (e.g. `local_metadata` for `local_metadata.annotations`) only when the new value
 * is not the default.
 */

export type UpdateMaskError =
  | { readonly kind: "empty" }
  | { readonly kind: "unknown"; readonly path: string }
  | { readonly kind: "duplicated"; readonly path: string };

const shorten = (s: string) => (s.length > 53 ? `${s.slice(0, 50)}...` : s);

/** Canton's reason text for a bad mask. */
export function updateMaskErrorReason(error: UpdateMaskError): string {
  switch (error.kind) {
    case "empty":
      return "The update mask contains no entries";
    case "unknown":
      return `The update path: '${shorten(error.path)}' points to an unknown field.`;
    case "duplicated":
      return `The update path: '${shorten(error.path)}' is duplicated.`;
  }
}

export interface UpdateMask {
  /** How `field` (a full path of an updatable field) is selected by the mask. */
  match(field: string): "exact" | "parent" | undefined;
}

/** Parses `paths` against the resource's updatable `fields`; an error when the mask is invalid. */
export function parseUpdateMask(
  paths: readonly string[],
  fields: readonly string[],
): UpdateMask | UpdateMaskError {
  if (paths.length === 0) return { kind: "empty" };
  const isPrefixOfField = (path: string) =>
    fields.some((field) => field === path || field.startsWith(`${path}.`));
  for (const path of paths) if (!isPrefixOfField(path)) return { kind: "unknown", path };
  const seen = new Set<string>();
  for (const path of paths) {
    if (seen.has(path)) return { kind: "duplicated", path };
    seen.add(path);
  }
  return {
    match(field) {
      if (seen.has(field)) return "exact";
      const parts = field.split(".");
      for (let n = parts.length - 1; n > 0; n--) if (seen.has(parts.slice(0, n).join("."))) return "parent";
      return undefined;
    },
  };
}

export function isUpdateMaskError(value: UpdateMask | UpdateMaskError): value is UpdateMaskError {
  return "kind" in value;
}
