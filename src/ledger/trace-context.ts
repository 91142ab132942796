import { randomBytes } from "node:crypto";

/**
 * The W3C trace context (https://www.w3.org/TR/trace-context/) a request carries to every ledger
 * call made for it, as Canton's JSON API maps `traceparent` and `tracestate` onto its calls: the
 * participant logs under that trace and puts its id in the errors it answers (`traceId`).
 */
export interface TraceContext {
  readonly traceparent: string;
  /** Vendors' entries, passed on as the client sent them; only with the client's traceparent. */
  readonly tracestate?: string;
  /** 32 lower-case hex digits: what errors and logs name. */
  readonly traceId: string;
  /** The span this context names, when spans are exported: what happens to the call is told to it. */
  readonly span?: SpanEvents;
}

/** What the layers a trace travels through may tell its span (OpenTelemetry span events). */
interface SpanEvents {
  event(name: string, attributes?: Readonly<Record<string, string | number | boolean>>): void;
}

/** version 00: exactly four fields; a later version: at least these, more after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The client's trace context when its `traceparent` is valid, else a fresh trace (and its
 * `tracestate` dropped, as the W3C says for an invalid parent): a request always has one.
 */
export function traceContextOf(traceparent: string, tracestate: string): TraceContext {
  return clientTraceContext(traceparent, tracestate) ?? freshTraceContext();
}

/** The client's trace context, or undefined when its `traceparent` is absent or invalid. */
export function clientTraceContext(traceparent: string, tracestate: string): TraceContext | undefined {
  const match = TRACEPARENT.exec(traceparent.trim());
  const [, version, traceId, spanId, , rest] = match ?? [];
  const valid =
    match !== null &&
    version !== "ff" &&
    traceId !== ZERO_TRACE &&
    spanId !== ZERO_SPAN &&
    (version !== "00" || rest === undefined);
  if (!valid || traceId === undefined) return undefined;
  const state = tracestate.trim();
  return { traceparent: traceparent.trim(), traceId, ...(state === "" ? {} : { tracestate: state }) };
}

/** A new trace, not sampled: the ledger may start its own sampling from it. */
export function freshTraceContext(): TraceContext {
  const traceId = randomHex(16);
  return { traceparent: traceparentOf(traceId, randomHex(8), false), traceId };
}

/** A version 00 `traceparent`: the trace, the span that is the parent, its sampled flag. */
export function traceparentOf(traceId: string, spanId: string, sampled: boolean): string {
  // Joined, one flat string: a template made four linked pieces that every subscriber's trace
  // kept (and the span id with them).
  return ["00", traceId, spanId, sampled ? "01" : "00"].join("-");
}

/**
 * The parent span a trace context names and whether it is sampled (the lowest bit of the flags):
 * version-traceid-spanid-flags, the same offsets in every version.
 */
export function parentSpanOf(trace: TraceContext): { spanId: string; sampled: boolean } {
  const flags = Number.parseInt(trace.traceparent.slice(53, 55), 16);
  return { spanId: trace.traceparent.slice(36, 52), sampled: (flags & 1) === 1 };
}

/**
 * Random bytes for ids, drawn from a pool the system's generator refills 4 KiB at a time: a
 * `randomBytes` call per request cost the gateway about 15 µs of a 250 µs GET (a profile of
 * `node dist/bench/micro/unary-cost.js get`). Trace ids need to be unique, not secret.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  poolAt += bytes;
  return pool.toString("hex", poolAt - bytes, poolAt);
}

/**
 * The trace's id when it is sampled (the lowest bit of its flags): one a tracing system records,
 * which a metric's exemplar may name. A fresh trace of the gateway's own is not sampled.
 */
export function sampledTraceId(trace: TraceContext): string | undefined {
  return parentSpanOf(trace).sampled ? trace.traceId : undefined;
}

/** The headers of a ledger call that carries `trace`. */
export function traceHeaders(trace: TraceContext | undefined): Record<string, string> | undefined {
  if (trace === undefined) return undefined;
  return trace.tracestate === undefined
    ? { traceparent: trace.traceparent }
    : { traceparent: trace.traceparent, tracestate: trace.tracestate };
}
