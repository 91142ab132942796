import type { Observable, Subscribable } from "rxjs";
import type { TraceContext } from "../ledger/trace-context.js";
import type { Availability } from "../proto/api-version.js";
import type { StreamFormat } from "./stream-format.js";

/**
 * The declarative description of one HTTP endpoint, free of any server: the route table is a
 * list of these; src/http serves it, src/docs documents it, and metrics label by its paths.
 */
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

type ParamType = "string" | "int32" | "int64" | "boolean" | "string[]" | "date-time";

export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  readonly required?: boolean;
}

export type BodySpec =
  /**
   * JSON validated against a component schema of schemas/components.json; `maxBytes`: a bound
   * of its own below server.max-body-bytes (a body the gateway keeps, as a stream ticket's).
   */
  | { readonly kind: "json"; readonly schema: string; readonly maxBytes?: number }
  /** Raw bytes (DAR uploads). */
  | { readonly kind: "bytes"; readonly contentType: "application/octet-stream" };

type ResponseSpec =
  /** `streamedItems`: the schema of the elements the answer also streams, page after page, when Accept asks. */
  | { readonly kind: "json"; readonly schema: string; readonly streamedItems?: string }
  /** `streamed`: also as NDJSON and server-sent events, one element at a time, when Accept asks. */
  | { readonly kind: "json-array"; readonly schema: string; readonly streamed?: true }
  /** `contentType`: the Content-Type of a success, text/plain (UTF-8) unless said. */
  | { readonly kind: "text"; readonly contentType?: string }
  | { readonly kind: "bytes" }
  | { readonly kind: "empty" };

export type QueryValue = string | number | boolean | string[];

export interface RequestContext {
  readonly path: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, QueryValue | undefined>>;
  /** Parsed and schema-checked JSON, or the raw bytes of a `bytes` body; undefined without body. */
  readonly body: unknown;
  /** The bearer token of this request only; never stored. */
  readonly token: string | undefined;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The request headers the route asked for (`Route.headers`, lower case); absent ones are "". */
  readonly headers: Readonly<Record<string, string>>;
  /** The client's W3C trace context, or a fresh one: every ledger call for the request carries it. */
  readonly trace: TraceContext;
}

export type Answer =
  | { readonly kind: "json"; readonly body: unknown; readonly status?: number }
  /** A JSON text already serialised as UTF-8, in order (list twins write their elements' texts so). */
  | { readonly kind: "json-bytes"; readonly chunks: readonly Uint8Array[]; readonly length: number }
  | { readonly kind: "text"; readonly text: string; readonly status?: number; readonly contentType?: string }
  | { readonly kind: "bytes"; readonly body: Uint8Array; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: "empty"; readonly status?: number }
  | StreamedAnswer;

/**
 * A body written as its elements arrive (NDJSON, SSE), the socket's backpressure pausing the
 * source. The status goes with the first element (or with the end of a stream that had none):
 * an error before it is answered as any request's error is, one after it ends the body with the
 * error as a last element, as the status is already 200.
 */
export interface StreamedAnswer {
  readonly kind: "stream";
  readonly format: StreamFormat;
  /** The elements' JSON texts; cold; a false on `demand$` asks it to pause. */
  readonly elements: (demand$: Subscribable<boolean>) => Observable<string>;
  /** Where a reconnect continues after an element (SSE's `id:`), when it says. */
  readonly idOf?: (element: string) => string | number | undefined;
}

export interface Route {
  readonly method: HttpMethod;
  /** Template with `{name}` segments, without the server's path prefix. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  readonly pathParams?: readonly ParamSpec[];
  readonly query?: readonly ParamSpec[];
  readonly body?: BodySpec;
  readonly response: ResponseSpec;
  /**
   * `none`: health, docs and metrics answer without a token. `optional`: answered without one (as
   * Canton serves GetLedgerApiVersion unsecured), and a token sent along is judged as any route's.
   */
  readonly auth: "token" | "optional" | "none";
  readonly deprecated?: boolean;
  /** The Canton releases that have this operation; absent: every known one. */
  readonly availability?: Availability;
  /** Request headers the handler reads (lower case): read only for the routes that ask. */
  readonly headers?: readonly string[];
  /**
   * `false`: not counted in the requests-in-flight gauge. For /metrics, whose scrape would
   * otherwise always find itself in flight.
   */
  readonly countsInFlight?: false;
  readonly handle: (ctx: RequestContext) => Promise<Answer>;
}
