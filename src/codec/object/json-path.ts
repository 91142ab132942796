/** A request body that does not fit its message: the HTTP layer answers 400 `Invalid value for: body`. */
export class InvalidJsonError extends Error {
  override name = "InvalidJsonError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(path === "" ? reason : `${path}: ${reason}`);
  }
}

export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${JSON.stringify(value)}`;
}
