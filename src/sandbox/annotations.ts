import { errors } from "./errors.js";

/**
 * Canton's rules for ObjectMeta annotations (ResourceAnnotationValidator, K8s-like keys,
 * 256 KiB in total) and how an update merges them (an empty value removes the key).
 */

const MAX_ANNOTATIONS_BYTES = 256 * 1024;
const NAME = "([a-zA-Z0-9]+[a-zA-Z0-9-]*)?[a-zA-Z0-9]+";
const KEY_SEGMENT = /^([a-zA-Z0-9]+[a-zA-Z0-9.\-_]*)?[a-zA-Z0-9]+$/;
const DNS_SUBDOMAIN = new RegExp(`^(${NAME}[.])*${NAME}$`);

const shorten = (s: string) => (s.length > 53 ? `${s.slice(0, 50)}...` : s);

export function withinMaxAnnotationsSize(annotations: Readonly<Record<string, string>>): boolean {
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations))
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  return bytes <= MAX_ANNOTATIONS_BYTES;
}

function keyError(key: string): string | undefined {
  const segments = key.split("/");
  if (segments.length > 2)
    return `Key '${shorten(key)}' contains more than one forward slash ('/') character`;
  const name = segments.length === 2 ? segments[1]! : segments[0]!;
  if (segments.length === 2) {
    const prefix = segments[0]!;
    if (prefix.length > 253)
      return `Key prefix segment '${shorten(prefix)}' exceeds maximum length of 253 characters`;
    if (!DNS_SUBDOMAIN.test(prefix)) return `Key prefix segment '${shorten(prefix)}' has invalid syntax`;
  }
  if (name.length > 63) return `Key name segment '${shorten(name)}' exceeds maximum length of 63 characters`;
  if (!KEY_SEGMENT.test(name)) return `Key name segment '${shorten(name)}' has invalid syntax`;
  return undefined;
}

/** Throws Canton's INVALID_ARGUMENT for annotations a request may not carry. */
export function validateAnnotations(
  annotations: Readonly<Record<string, string>>,
  allowEmptyValues: boolean,
  fieldName: string,
): void {
  const nonEmpty = Object.fromEntries(Object.entries(annotations).filter(([, value]) => value !== ""));
  if (!withinMaxAnnotationsSize(nonEmpty)) {
    throw errors.invalidArgument(`annotations from field '${fieldName}' are larger than the limit of 256kb`);
  }
  for (const key of Object.keys(annotations)) {
    const error = keyError(key);
    if (error !== undefined) throw errors.invalidArgument(error);
  }
  if (!allowEmptyValues) {
    for (const [key, value] of Object.entries(annotations)) {
      if (value === "")
        throw errors.invalidArgument(`The value of an annotation is empty for key: '${shorten(key)}'`);
    }
  }
}

/** An update's annotations over the existing ones; keys updated to "" are removed. */
export function mergeAnnotations(
  existing: Readonly<Record<string, string>>,
  update: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...existing, ...update }).filter(([, value]) => value !== ""));
}
