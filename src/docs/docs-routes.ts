import type { Route } from "../endpoints/route.js";
import type { SchemaComponents } from "../endpoints/schema-components.js";
import { routeNotFoundError } from "../errors/index.js";
import type { ApiVersion } from "../proto/api-version.js";
import { asyncApiYaml, type WsChannelDoc } from "./asyncapi-document.js";
import { Guides } from "./guides.js";
import { openApiYaml } from "./openapi-document.js";

/** RFC 9512's media type; it has no charset parameter, as YAML is UTF-8. */
const YAML = "application/yaml";
/** RFC 7763's media type, whose charset parameter is required. */
const MARKDOWN = "text/markdown; charset=utf-8";

/**
 * /docs/openapi and /docs/asyncapi of the Canton release served now (`version()`): its
 * operations and channels, with its shapes (`components`), generated from the tables on first
 * request for a release and then kept (the tables do not change while the gateway runs; the
 * release served may). `apiRoutes` is read lazily so the docs list the docs routes themselves
 * too. /docs/<file> serves the guides of docs/ as they are (the OpenAPI document's description
 * links each); any other name is an unknown path's 404.
 */
export function docsRoutes(
  apiRoutes: () => readonly Route[],
  channels: readonly WsChannelDoc[],
  components: (version: ApiVersion) => SchemaComponents,
  pathPrefix: string,
  version: () => ApiVersion,
  guides: Guides = new Guides(),
): Route[] {
  const openapi = new Map<ApiVersion, string>();
  const asyncapi = new Map<ApiVersion, string>();
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
        const served = version();
        let text = openapi.get(served);
        if (text === undefined) {
          const links = guides.files.map((file) => ({ file, title: guides.title(file) }));
          text = openApiYaml(apiRoutes(), components(served), pathPrefix, links, served);
          openapi.set(served, text);
        }
        return { kind: "text", text, contentType: YAML };
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
        const served = version();
        let text = asyncapi.get(served);
        if (text === undefined) {
          text = asyncApiYaml(channels, components(served), pathPrefix, served);
          asyncapi.set(served, text);
        }
        return { kind: "text", text, contentType: YAML };
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
