import { type MonoTypeOperatorFunction, Observable } from "rxjs";
import { ElementLimitExceededError } from "../errors/index.js";

function checkCount(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be an integer >= 0, got ${n}`);
}

/**
 * Canton's HTTP list-twin rule. `max` is the node limit
 * (websocket-config.http-list-max-elements-limit), `limit` the client's `limit` query.
 * - With `limit <= max`: pass at most `limit` elements, then complete (a truncated 200 list).
 *   `limit` 0 still reads until the source's first element (passed on to nobody), end or error:
 *   an empty answer is a yes to the reader only once its source said something, so a limit of 0
 *   is no way around the ledger's verdict (issue 35, F3).
 * - Otherwise: pass up to `max` elements; when element max+1 arrives the stream errors with
 *   {@link ElementLimitExceededError} `{count: max + 1, max}` (HTTP 413). The surplus element is
 *   not emitted, so a consumer never holds more than `max`.
 * In both cases the source is unsubscribed as soon as the outcome is known, which cancels the
 * gRPC call instead of draining it.
 */
export function elementLimit<T>(max: number, limit?: number): MonoTypeOperatorFunction<T> {
  checkCount("max", max);
  if (limit !== undefined) checkCount("limit", limit);
  const truncateAt = limit !== undefined && limit <= max ? limit : undefined;
  return (source) =>
    new Observable<T>((subscriber) => {
      let count = 0;
      // The inner subscription is returned as teardown: erroring or completing `subscriber`
      // unsubscribes it, which is what stops the upstream early.
      return source.subscribe({
        next: (value) => {
          count += 1;
          if (truncateAt === undefined && count > max) {
            subscriber.error(new ElementLimitExceededError(count, max));
            return;
          }
          if (truncateAt === 0) {
            subscriber.complete();
            return;
          }
          subscriber.next(value);
          if (count === truncateAt) subscriber.complete();
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
