import { stringify } from "yaml";
import type { ParamSpec, Route } from "../endpoints/route.js";
import type { SchemaComponents } from "../endpoints/schema-components.js";
import { type ApiVersion, availableIn, deprecatedIn } from "../proto/api-version.js";

/** A guide of docs/, served at /docs/<file>. */
interface GuideLink {
  readonly file: string;
  readonly title: string;
}

/**
 * OpenAPI 3.0.3 of the HTTP routes of Canton release `version` (those the release has, marked
 * deprecated as it marks them), built from the route table and the release's shapes
 * (`components`). Its description links the guides the gateway serves.
 */
function openApiDocument(
  routes: readonly Route[],
  components: SchemaComponents,
  pathPrefix: string,
  guides: readonly GuideLink[],
  version: ApiVersion,
): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    if (!availableIn(route.availability, version)) continue;
    const path = `${pathPrefix}${route.path}`;
    paths[path] ??= {};
    (paths[path] as Record<string, object>)[route.method.toLowerCase()] = operation(route, version);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "JSON Ledger API HTTP endpoints",
      version: components.apiVersion,
      description: description(guides, pathPrefix),
    },
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        httpAuth: { type: "http", scheme: "bearer", description: "Ledger API JWT" },
        apiKeyAuth: {
          type: "apiKey",
          in: "header",
          name: "Sec-WebSocket-Protocol",
          description: "Ledger API JWT (WebSocket)",
        },
      },
    },
  };
}

export function openApiYaml(
  routes: readonly Route[],
  components: SchemaComponents,
  pathPrefix: string,
  guides: readonly GuideLink[],
  version: ApiVersion,
): string {
  return stringify(openApiDocument(routes, components, pathPrefix, guides, version), {
    aliasDuplicateObjects: false,
  });
}

/** CommonMark, as OpenAPI reads descriptions; the links are paths on this gateway. */
function description(guides: readonly GuideLink[], pathPrefix: string): string {
  const lead = "Served by ledger-json-gateway in front of a participant's gRPC Ledger API v2.";
  if (guides.length === 0) return lead;
  const links = guides.map(({ file, title }) => `- [${title}](${pathPrefix}/docs/${file})`);
  return [lead, "", "The gateway's guides, as Markdown (`GET /docs/{guide}`):", "", ...links].join("\n");
}

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

function operation(route: Route, version: ApiVersion): object {
  const streamed = route.response.kind === "json-array" && route.response.streamed === true;
  const parameters = [
    ...(route.pathParams ?? []).map((p) => parameter(p, "path")),
    ...(route.query ?? []).map((p) => parameter(p, "query")),
    ...(streamed ? [LAST_EVENT_ID] : []),
  ];
  const invalidLocations = [
    ...(route.body ? ["body"] : []),
    ...(streamed ? ["header Last-Event-ID"] : []),
    ...(route.query ?? []).map((p) => `query parameter ${p.name}`),
    ...(route.pathParams ?? []).map((p) => `path parameter ${p.name}`),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(deprecatedIn(route.deprecated, route.availability, version) ? { deprecated: true } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route) } : {}),
    responses: {
      "200": success(route),
      "400": {
        description: ["Invalid value", ...invalidLocations.map((l) => `Invalid value for: ${l}`)].join(", "),
        content: { "text/plain": { schema: { type: "string" } } },
      },
      default: {
        description: "An error of the ledger or the gateway",
        content: { "application/json": { schema: ref("JsCantonError") } },
      },
    },
    ...(route.auth !== "none" ? { security: [{ httpAuth: [] }, { apiKeyAuth: [] }] } : {}),
  };
}

const LAST_EVENT_ID = {
  name: "Last-Event-ID",
  in: "header",
  required: false,
  description:
    "With Accept: text/event-stream, the id of the last event received: the stream continues after it",
  schema: { type: "string" },
};

function parameter(spec: ParamSpec, where: "path" | "query"): object {
  return {
    name: spec.name,
    in: where,
    required: where === "path" || spec.required === true,
    schema: paramSchema(spec),
  };
}

function paramSchema(spec: ParamSpec): object {
  switch (spec.type) {
    case "string":
      return { type: "string" };
    case "boolean":
      return { type: "boolean" };
    case "int32":
      return { type: "integer", format: "int32" };
    case "int64":
      return { type: "integer", format: "int64" };
    case "date-time":
      return { type: "string", format: "date-time" };
    case "string[]":
      return { type: "array", items: { type: "string" } };
  }
}

/**
 * The list twins' streamed forms, an extension of this gateway's (Canton answers one array):
 * chosen by Accept, described in `x-ledger-json-gateway-streaming` as OpenAPI has no word for a
 * body written one element at a time.
 */
function streamedContent(element: string): object {
  return {
    "application/x-ndjson": {
      schema: ref(element),
      "x-ledger-json-gateway-streaming":
        "One element per line, written as it arrives. The node's list element limit does not apply; " +
        "`limit` and the idle wait do. An error after the first element is the last line, a JsCantonError.",
    },
    "text/event-stream": {
      schema: { type: "string" },
      "x-ledger-json-gateway-streaming":
        "One event per element: `id:` its offset (the ACS: its continuation token), `data:` the element " +
        "(schema " +
        element +
        "). A reconnect with Last-Event-ID continues after it. An error after the " +
        "first element is a last event `JsCantonError` whose data is the JsCantonError.",
    },
  };
}

/** A paged answer's streamed forms: its pages' elements, the one asked for and every later one. */
function pagesStreamedContent(item: string): object {
  const text =
    "Every element of the page asked for and of every page after it, one by one as the pages arrive; " +
    "an error after the first element is the last one, a JsCantonError.";
  return {
    "application/x-ndjson": {
      schema: ref(item),
      "x-ledger-json-gateway-streaming": `One element per line. ${text}`,
    },
    "text/event-stream": {
      schema: { type: "string" },
      "x-ledger-json-gateway-streaming": `One event per element (schema ${item}), without ids. ${text}`,
    },
  };
}

function requestBody(route: Route): object {
  const body = route.body;
  if (body?.kind === "bytes") {
    return {
      required: true,
      content: { [body.contentType]: { schema: { type: "string", format: "binary" } } },
    };
  }
  return { required: true, content: { "application/json": { schema: ref(body?.schema ?? "") } } };
}

function success(route: Route): object {
  const r = route.response;
  switch (r.kind) {
    case "json":
      return {
        description: "",
        content: {
          "application/json": { schema: ref(r.schema) },
          ...(r.streamedItems ? pagesStreamedContent(r.streamedItems) : {}),
        },
      };
    case "json-array":
      return {
        description: "",
        content: {
          "application/json": { schema: { type: "array", items: ref(r.schema) } },
          ...(r.streamed ? streamedContent(r.schema) : {}),
        },
      };
    case "text": {
      // The charset is the transfer's business; the version of the metrics format is the document's.
      const mediaType = r.contentType?.replace(/;\s*charset=[^;]*/i, "") ?? "text/plain";
      return { description: "", content: { [mediaType]: { schema: { type: "string" } } } };
    }
    case "bytes":
      return {
        description: "",
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      };
    case "empty":
      return { description: "" };
  }
}
