import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import protobuf from "protobufjs";

/**
 * An OTLP/HTTP trace receiver (POST /v1/traces, as a collector serves it) that decodes what
 * exporters send with the official OpenTelemetry protocol definitions (test/fixtures/
 * opentelemetry-proto, opentelemetry-proto v1.11.0): protobuf bodies as they are, JSON bodies
 * through the same message type (OTLP/JSON writes ids as hex, which the type reads as bytes).
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** opentelemetry.proto.trace.v1.Span.SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  events: { name: string; attributes: Record<string, string | number | boolean> }[];
  /** Status.StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT names. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The Content-Type of every export request, in order. */
  readonly contentTypes: string[];
  /** The spans of one trace, once `ready` holds of them (within `withinMs`). */
  trace(
    traceId: string,
    ready: (spans: ReceivedSpan[]) => boolean,
    withinMs?: number,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const PROTOS = join(import.meta.dirname, "../fixtures/opentelemetry-proto");

function exportRequestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTOS, target);
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto");
  root.resolveAll();
  return root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
}

type Json = Record<string, unknown>;

const ID_FIELDS = new Set(["traceId", "spanId", "parentSpanId"]);

/** OTLP/JSON ids (hex) as the proto3 JSON mapping reads bytes (base64), everywhere in the body. */
function hexIdsAsBase64(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIdsAsBase64);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      ID_FIELDS.has(key) && typeof field === "string"
        ? Buffer.from(field, "hex").toString("base64")
        : hexIdsAsBase64(field),
    ]),
  );
}

function attributesOf(list: unknown): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of (list ?? []) as { key: string; value: Json }[]) {
    if ("stringValue" in value) attributes[key] = value.stringValue as string;
    else if ("intValue" in value) attributes[key] = Number(value.intValue);
    else if ("doubleValue" in value) attributes[key] = Number(value.doubleValue);
    else if ("boolValue" in value) attributes[key] = value.boolValue as boolean;
  }
  return attributes;
}

const hex = (base64: unknown) => Buffer.from((base64 as string | undefined) ?? "", "base64").toString("hex");

function spansOf(request: Json): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of (request.resourceSpans ?? []) as Json[]) {
    const resource = attributesOf((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Json[]) {
      for (const span of (scopeSpans.spans ?? []) as Json[]) {
        const status = (span.status ?? {}) as { code?: number; message?: string };
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name as string,
          kind: (span.kind as number | undefined) ?? 0,
          attributes: attributesOf(span.attributes),
          events: ((span.events ?? []) as Json[]).map((event) => ({
            name: event.name as string,
            attributes: attributesOf(event.attributes),
          })),
          status: { code: status.code ?? 0, message: status.message ?? "" },
          resource,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const type = exportRequestType();
  const asObject = (message: protobuf.Message) =>
    type.toObject(message, { bytes: String, longs: String, enums: Number, defaults: false }) as Json;
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const contentType = req.headers["content-type"] ?? "";
    contentTypes.push(contentType);
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    try {
      const json = contentType.startsWith("application/json");
      const message = json
        ? type.fromObject(hexIdsAsBase64(JSON.parse(body.toString("utf8"))) as Json)
        : type.decode(body);
      const invalid = type.verify(message);
      if (invalid !== null) throw new Error(invalid);
      spans.push(...spansOf(asObject(message)));
      if (json) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    } catch (error) {
      res.writeHead(400, { "content-type": "text/plain" }).end(String(error));
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async trace(traceId, ready, withinMs = 10_000) {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const found = spans.filter((span) => span.traceId === traceId);
        if (ready(found)) return found;
        if (Date.now() > deadline)
          throw new Error(`trace ${traceId} incomplete: ${JSON.stringify(found.map((s) => s.name))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      server.close();
      server.closeAllConnections();
      await once(server, "close");
    },
  };
}
