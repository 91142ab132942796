import type { Route } from "../endpoints/route.js";
import type { SchemaComponents } from "../endpoints/schema-components.js";
import { asyncApiYaml, type WsChannelDoc } from "./asyncapi-document.js";
import { openApiYaml } from "./openapi-document.js";

/** RFC 9512's media type; it has no charset parameter, as YAML is UTF-8. */
const YAML = "application/yaml";

/**
 * /docs/openapi and /docs/asyncapi, generated from the tables on first request and then
 * kept (the tables do not change while the gateway runs). `apiRoutes` is read lazily so the
 * docs list the docs routes themselves too.
 */
export function docsRoutes(
  apiRoutes: () => readonly Route[],
  channels: readonly WsChannelDoc[],
  components: SchemaComponents,
  pathPrefix: string,
): Route[] {
  let openapi: string | undefined;
  let asyncapi: string | undefined;
  return [
    {
      method: "GET",
      path: "/docs/openapi",
      operationId: "getDocsOpenapi",
      summary: "OpenAPI description of the HTTP endpoints (YAML)",
      tag: "Docs",
      response: { kind: "text", contentType: YAML },
      auth: "none",
      handle: async () => {
        openapi ??= openApiYaml(apiRoutes(), components, pathPrefix);
        return { kind: "text", text: openapi, contentType: YAML };
      },
    },
    {
      method: "GET",
      path: "/docs/asyncapi",
      operationId: "getDocsAsyncapi",
      summary: "AsyncAPI description of the WebSocket endpoints (YAML)",
      tag: "Docs",
      response: { kind: "text", contentType: YAML },
      auth: "none",
      handle: async () => {
        asyncapi ??= asyncApiYaml(channels, components, pathPrefix);
        return { kind: "text", text: asyncapi, contentType: YAML };
      },
    },
  ];
}
