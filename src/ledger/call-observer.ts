import type { TraceContext } from "./trace-context.js";

/** A call to the ledger as it starts: what metrics and spans name it by. */
export interface CallStart {
  /** Relative to `com.daml.ledger.api.v2`, e.g. `StateService`. */
  readonly service: string;
  readonly method: string;
  readonly streaming: boolean;
  /** The trace of the request the call is made for. */
  readonly trace: TraceContext | undefined;
  /** The request message, framed. */
  readonly sentBytes: number;
}

/** How a call ended. */
export interface CallEnd {
  /** gRPC status name, e.g. OK, NOT_FOUND. */
  readonly code: string;
  readonly seconds: number;
  /** Response messages' bytes, as received. */
  readonly receivedBytes: number;
}

/** One call being watched. */
export interface WatchedCall {
  /** The trace the call carries to the ledger: the request's, or a span of the call's own. */
  readonly trace: TraceContext | undefined;
  end(outcome: CallEnd): void;
}

/** Watches every call a LedgerClient makes (metrics, spans); told of each once it starts. */
export type CallObserver = (call: CallStart) => WatchedCall;

/** Both observers on every call; the second sees (and may replace) the trace the first passes on. */
export function observeBoth(first: CallObserver, second: CallObserver): CallObserver {
  return (call) => {
    const a = first(call);
    const b = second(a.trace === call.trace ? call : { ...call, trace: a.trace });
    return {
      trace: b.trace,
      end(outcome) {
        a.end(outcome);
        b.end(outcome);
      },
    };
  };
}
