/** Malformed body, path or query value: answered as 400 text/plain, as Canton does. */
export class InvalidValueError extends Error {
  override name = "InvalidValueError";
  constructor(
    /** `body`, `query parameter limit`, `path parameter party`. */
    readonly location: string,
    readonly detail?: string,
  ) {
    super(`Invalid value for: ${location}${detail ? ` (${detail})` : ""}`);
  }
}
