import type { CallObserver } from "../ledger/call-observer.js";
import type { TraceContext } from "../ledger/trace-context.js";

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/**
 * A span of the gateway's own. Its `trace` names it: the ledger calls made under it carry that
 * context, so they become its children, and it takes the events the layers tell `trace.span`.
 */
export interface GatewaySpan {
  readonly trace: TraceContext;
  /** Ends the span (once; later calls do nothing); `error`: it failed, and why. */
  end(name: string, attributes: SpanAttributes, error?: string): void;
}

/**
 * The gateway's spans, exported with OpenTelemetry when the standard environment asks for it
 * (src/tracing/start-tracing.ts). Absent, nothing is made: no span, no id, no attribute.
 */
export interface Tracing {
  /** An HTTP request's span (kind SERVER), the child of the client's trace when it sent one. */
  request(client: TraceContext | undefined): GatewaySpan;
  /** A WebSocket subscription's span, from its upgrade request to its close. */
  subscription(client: TraceContext | undefined): GatewaySpan;
  /** Every ledger call made under a span (one carrying a trace) as a CLIENT span, its child. */
  readonly ledgerCalls: CallObserver;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}
