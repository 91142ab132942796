import { defer, type MonoTypeOperatorFunction, tap } from "rxjs";
import { endReasonOf, type StreamEndReason } from "../errors/index.js";

export interface StreamEnd {
  reason: StreamEndReason;
  /** Elements that passed this point. */
  elements: number;
  /** The terminating error, when reason is not "completed" or "unsubscribed". */
  error?: unknown;
}

/**
 * Reports once, per subscription, how the stream ended: the hook for metrics
 * (`ledger_gateway_stream_ends_total{reason}`) and logs. Place it after the policy operators
 * that error (`elementLimit`) and before `errorFrame`, which would otherwise turn every error
 * into a completion; `idleTimeout` completes, so an idle end is told by its `onIdle` instead.
 */
export function streamEnd<T>(onEnd: (end: StreamEnd) => void): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() => {
      let elements = 0;
      return source.pipe(
        tap({
          next: () => {
            elements += 1;
          },
          complete: () => onEnd({ reason: "completed", elements }),
          error: (error: unknown) => onEnd({ reason: endReasonOf(error), elements, error }),
          // Called only when the subscriber leaves before a terminal event (client went away).
          unsubscribe: () => onEnd({ reason: "unsubscribed", elements }),
        }),
      );
    });
}
