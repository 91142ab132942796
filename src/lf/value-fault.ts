/**
 * The codec's internal failure signal. It is not an Error (no stack trace to capture on
 * what is an ordinary bad request) and it collects the JSON path while it unwinds: each
 * container adds its own segment, so the happy path never builds a path string.
 */
import { ValueCodecError } from "./errors.js";

export class ValueFault {
  /** Path segments, innermost first (`.field`, `[3]`). */
  readonly segments: string[] = [];
  constructor(readonly detail: string) {}

  toError(rootPath: string): ValueCodecError {
    let path = rootPath;
    for (let i = this.segments.length - 1; i >= 0; i--) path += this.segments[i];
    if (rootPath === "" && path.startsWith(".")) path = path.slice(1);
    return new ValueCodecError(path, this.detail);
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `.name` for identifier-like keys, `["odd key"]` for the rest (TextMap keys can be anything). */
export function keySegment(key: string): string {
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A fault located under one path segment of the value being converted. */
export function faultAt(detail: string, segment: string): ValueFault {
  const fault = new ValueFault(detail);
  fault.segments.push(segment);
  return fault;
}

/** Re-throws `e` after recording that it happened under `segment`. */
export function rethrowUnder(e: unknown, segment: string): never {
  if (e instanceof ValueFault) e.segments.push(segment);
  throw e;
}

/** How a JSON input is named in an error message. */
export function describeJson(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  switch (typeof v) {
    case "object":
      return "an object";
    case "string":
      return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
    default:
      return String(v);
  }
}

/** How a ledger Value is named in an error message: its case. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return "no value";
  if (typeof v !== "object") return describeJson(v);
  const sum = (v as { sum?: unknown }).sum;
  if (typeof sum === "string") return sum;
  const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] != null);
  return keys[0] ?? "an empty value";
}
