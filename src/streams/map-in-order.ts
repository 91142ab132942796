import { Observable, type OperatorFunction } from "rxjs";

/**
 * Maps each element with a function that is usually synchronous and sometimes needs to wait
 * (e.g. loading a package's signatures the first time an event names it), keeping the order.
 * Unlike concatMap it allocates nothing per element on the synchronous path, which is the
 * path of almost every element of a stream. `undefined` results are dropped.
 */
export function mapInOrder<T, R>(
  fn: (value: T) => R | undefined | Promise<R | undefined>,
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const queue: T[] = [];
      let waiting = false;
      let sourceDone = false;
      let sourceError: { error: unknown } | undefined;

      const emit = (result: R | undefined) => {
        if (result !== undefined) subscriber.next(result);
      };
      // Drains the queue until it is empty or an element has to wait.
      const drain = () => {
        while (!waiting && queue.length > 0) {
          const value = queue.shift() as T;
          let result: R | undefined | Promise<R | undefined>;
          try {
            result = fn(value);
          } catch (error) {
            subscriber.error(error);
            return;
          }
          if (result instanceof Promise) {
            waiting = true;
            result.then(
              (resolved) => {
                waiting = false;
                emit(resolved);
                drain();
              },
              (error: unknown) => subscriber.error(error),
            );
          } else emit(result);
        }
        if (waiting || queue.length > 0) return;
        // Elements already received go out before the end, as they would have without waiting.
        if (sourceError) subscriber.error(sourceError.error);
        else if (sourceDone) subscriber.complete();
      };

      const subscription = source.subscribe({
        next: (value) => {
          queue.push(value);
          drain();
        },
        error: (error: unknown) => {
          sourceError = { error };
          drain();
        },
        complete: () => {
          sourceDone = true;
          drain();
        },
      });
      return () => subscription.unsubscribe();
    });
}
