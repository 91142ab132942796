import { stringify } from "yaml";
import type { ParamSpec, Route } from "../endpoints/route.js";
import type { SchemaComponents } from "../endpoints/schema-components.js";

/** OpenAPI 3.0.3 of the HTTP routes, built from the route table and schemas/components.json. */
export function openApiDocument(
  routes: readonly Route[],
  components: SchemaComponents,
  pathPrefix: string,
): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const path = `${pathPrefix}${route.path}`;
    paths[path] ??= {};
    (paths[path] as Record<string, object>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "JSON Ledger API HTTP endpoints",
      version: components.apiVersion,
      description: "Served by ledger-json-gateway in front of a participant's gRPC Ledger API v2.",
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
): string {
  return stringify(openApiDocument(routes, components, pathPrefix), { aliasDuplicateObjects: false });
}

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

function operation(route: Route): object {
  const parameters = [
    ...(route.pathParams ?? []).map((p) => parameter(p, "path")),
    ...(route.query ?? []).map((p) => parameter(p, "query")),
  ];
  const invalidLocations = [
    ...(route.body ? ["body"] : []),
    ...(route.query ?? []).map((p) => `query parameter ${p.name}`),
    ...(route.pathParams ?? []).map((p) => `path parameter ${p.name}`),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(route.deprecated ? { deprecated: true } : {}),
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
    ...(route.auth === "token" ? { security: [{ httpAuth: [] }, { apiKeyAuth: [] }] } : {}),
  };
}

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
      return { description: "", content: { "application/json": { schema: ref(r.schema) } } };
    case "json-array":
      return {
        description: "",
        content: { "application/json": { schema: { type: "array", items: ref(r.schema) } } },
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
