import type { Route } from "../endpoints/route.js";
import type { SchemaComponents } from "../endpoints/schema-components.js";
import { routeNotFoundError } from "../errors/index.js";
import { asyncApiYaml, type WsChannelDoc } from "./asyncapi-document.js";
import { Guides } from "./guides.js";
import { openApiYaml } from "./openapi-document.js";

/** RFC 9512's media type; it has no charset parameter, as YAML is UTF-8. */
const YAML = "application/yaml";
/** RFC 7763's media type, whose charset parameter is required. */
const MARKDOWN = "text/markdown; charset=utf-8";

/**
 * /docs/openapi and /docs/asyncapi, generated from the tables on first request and then
 * kept (the tables do not change while the gateway runs). `apiRoutes` is read lazily so the
 * docs list the docs routes themselves too. /docs/<file> serves the guides of docs/ as they are
 * (the OpenAPI document's description links each); any other name is an unknown path's 404.
 */
export function docsRoutes(
  apiRoutes: () => readonly Route[],
  channels: readonly WsChannelDoc[],
  components: SchemaComponents,
  pathPrefix: string,
  guides: Guides = new Guides(),
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
        openapi ??= openApiYaml(
          apiRoutes(),
          components,
          pathPrefix,
          guides.files.map((file) => ({ file, title: guides.title(file) })),
        );
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
    {
      method: "GET",
      path: "/docs/{guide}",
      operationId: "getDocsGuide",
      summary: "A guide of the gateway's docs (Markdown), e.g. operations.md: the description lists them",
      tag: "Docs",
      pathParams: [{ name: "guide", type: "string", required: true }],
      response: { kind: "text", contentType: MARKDOWN },
      auth: "none",
      handle: async ({ path }) => {
        const file = path.guide ?? "";
        const text = guides.text(file);
        if (text === undefined) throw routeNotFoundError("GET", `${pathPrefix}/docs/${file}`);
        return { kind: "text", text, contentType: MARKDOWN };
      },
    },
  ];
}
