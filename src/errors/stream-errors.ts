/**
 * Typed errors of the stream policy operators, in one module (as nats.js does) so that sinks,
 * the error mapping and metrics can tell why a stream ended with `instanceof` or by `reason`,
 * without parsing messages.
 */

/** Why a stream ended; bounded, so it can be a metric label (metrics list every value at 0). */
export const STREAM_END_REASONS = [
  "completed",
  "idle",
  "element_limit",
  "slow_consumer",
  "error",
  "unsubscribed",
] as const;

export type StreamEndReason = (typeof STREAM_END_REASONS)[number];

/** Base class: every policy error carries its end reason for metrics. */
export abstract class StreamPolicyError extends Error {
  abstract readonly reason: StreamEndReason;
}

/** No element arrived within `ms` of subscription or of the previous element. */
export class IdleTimeoutError extends StreamPolicyError {
  override readonly name = "IdleTimeoutError";
  readonly reason = "idle";
  constructor(
    readonly ms: number,
    /** Elements that passed before the stream went idle. */
    readonly seen: number,
  ) {
    super(`No element within ${ms} ms (after ${seen} elements)`);
  }
}

/**
 * More elements matched than the node limit allows. `count` is how many were collected when
 * the operator gave up (max + 1: it stops as soon as the limit is known to be exceeded).
 */
export class ElementLimitExceededError extends StreamPolicyError {
  override readonly name = "ElementLimitExceededError";
  readonly reason = "element_limit";
  constructor(
    readonly count: number,
    readonly max: number,
  ) {
    // Canton's wording: tooManyElementsError uses this text as the JsCantonError cause.
    super(`The number of matching elements (${count}) is greater than the node limit (${max}).`);
  }
}

/** The end reason of an error that terminated a stream. */
export function endReasonOf(err: unknown): StreamEndReason {
  return err instanceof StreamPolicyError ? err.reason : "error";
}
