/**
 * The converters the object path compiles per message type. `context` travels unchanged
 * through one conversion to every nested converter (e.g. the package ids that
 * `#package-name` references resolved to for this request).
 */
export type ToJson = (message: unknown, context?: unknown) => unknown;
export type FromJson = (json: unknown, path: string, context?: unknown) => unknown;

export interface ObjectConverter {
  readonly toJson: ToJson;
  readonly fromJson: FromJson;
}
