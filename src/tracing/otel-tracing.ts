import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  type Context,
  context,
  createTraceState,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { NodeSDK, resources } from "@opentelemetry/sdk-node";
import type { CallObserver } from "../ledger/call-observer.js";
import { parentSpanOf, type TraceContext, traceparentOf } from "../ledger/trace-context.js";
import { LEDGER_API_PACKAGE } from "../proto/ledger-api-protos.js";
import type { GatewaySpan, SpanAttributes, Tracing } from "./tracing.js";

/**
 * The OpenTelemetry SDK as the standard environment configures it (OTEL_TRACES_EXPORTER,
 * OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, ...): spans only. No
 * instrumentation, propagator or log export: the gateway makes its spans itself and hands their
 * context on explicitly (TraceContext), so no async context is tracked per request.
 *
 * @param worker the worker thread (server.workers > 1), as the resource's `ledger_gateway.worker`
 */
export function startOtelTracing(version: string, worker: number | undefined): Tracing {
  const sdk = new NodeSDK({
    // Each worker thread exports on its own: its spans say which it is.
    ...(worker === undefined
      ? {}
      : {
          resource: resources
            .defaultResource()
            .merge(resources.resourceFromAttributes({ "ledger_gateway.worker": worker })),
        }),
    instrumentations: [],
    textMapPropagator: null,
    logRecordProcessors: [],
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName: "ledger-json-gateway" }),
  });
  sdk.start();
  return new OtelTracing(trace.getTracer("ledger-json-gateway", version), async () => {
    await sdk.shutdown();
    // The API's globals freed: a later gateway in this thread (tests) registers its own SDK.
    trace.disable();
    context.disable();
  });
}

class OtelTracing implements Tracing {
  constructor(
    private readonly tracer: Tracer,
    readonly shutdown: () => Promise<void>,
  ) {}

  request(client: TraceContext | undefined): GatewaySpan {
    return this.#span("HTTP", client);
  }

  subscription(client: TraceContext | undefined): GatewaySpan {
    return this.#span("WebSocket", client);
  }

  #span(name: string, client: TraceContext | undefined): GatewaySpan {
    const parent = client === undefined ? ROOT_CONTEXT : contextOf(client);
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
    let ended = false;
    return {
      trace: traceOf(span, client?.tracestate, {
        event: (event, attributes) => span.addEvent(event, attributes),
      }),
      end(name, attributes, error) {
        if (ended) return;
        ended = true;
        span.updateName(name);
        span.setAttributes(attributes);
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        span.end();
      },
    };
  }

  readonly ledgerCalls: CallObserver = (call) => {
    if (call.trace === undefined) return { trace: undefined, end: () => undefined };
    const service = `${LEDGER_API_PACKAGE}.${call.service}`;
    const attributes: SpanAttributes = {
      "rpc.system": "grpc",
      "rpc.service": service,
      "rpc.method": call.method,
      "ledger_gateway.call.streaming": call.streaming,
      "ledger_gateway.call.sent_bytes": call.sentBytes,
    };
    const span = this.tracer.startSpan(
      `${service}/${call.method}`,
      { kind: SpanKind.CLIENT, attributes },
      contextOf(call.trace),
    );
    return {
      trace: traceOf(span, call.trace.tracestate, call.trace.span),
      end(outcome) {
        span.setAttributes({
          "rpc.grpc.status_code": GrpcStatus[outcome.code as keyof typeof GrpcStatus] ?? -1,
          "ledger_gateway.call.received_bytes": outcome.receivedBytes,
        });
        if (outcome.code !== "OK") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
        span.end();
      },
    };
  };
}

/** A trace context as the parent of a span made here. */
function contextOf(parent: TraceContext): Context {
  const { spanId, sampled } = parentSpanOf(parent);
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
    ...(parent.tracestate === undefined ? {} : { traceState: createTraceState(parent.tracestate) }),
  });
}

/** The context that names `span`: what the calls made under it carry to the ledger. */
function traceOf(span: Span, tracestate: string | undefined, events: TraceContext["span"]): TraceContext {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return {
    traceparent: traceparentOf(traceId, spanId, (traceFlags & TraceFlags.SAMPLED) !== 0),
    traceId,
    ...(tracestate === undefined ? {} : { tracestate }),
    ...(events === undefined ? {} : { span: events }),
  };
}
