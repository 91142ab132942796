import { catchError, type OperatorFunction, of } from "rxjs";

/**
 * Turns an error into one final element, the error frame, followed by completion. Stream sinks
 * (WebSocket) send errors in-band as a last JsCantonError frame and then close normally, so
 * past this operator a stream never errors. `toFrame` is the one place that builds error bodies
 * (the error mapping module); if it throws, that error is surfaced as is.
 */
export function errorFrame<T, F>(toFrame: (err: unknown) => F): OperatorFunction<T, T | F> {
  return catchError((err: unknown) => of(toFrame(err)));
}
