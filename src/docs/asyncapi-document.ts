import { stringify } from "yaml";
import type { SchemaComponents } from "../endpoints/schema-components.js";

/** A WebSocket endpoint as the docs describe it: one request frame in, a stream of frames out. */
export interface WsChannelDoc {
  path: string;
  summary: string;
  /** Component schema of the client's request frame. */
  requestSchema: string;
  /** Component schema of each element frame (errors are JsCantonError frames). */
  responseSchema: string;
}

/** AsyncAPI 2.6.0 of the WebSocket endpoints, built from their table and schemas/components.json. */
export function asyncApiDocument(
  channels: readonly WsChannelDoc[],
  components: SchemaComponents,
  pathPrefix: string,
): object {
  const messages: Record<string, object> = {};
  const docChannels: Record<string, object> = {};
  for (const channel of channels) {
    const responseMessage = `Either_JsCantonError_${channel.responseSchema}`;
    messages[channel.requestSchema] = { payload: ref(channel.requestSchema) };
    messages[responseMessage] = { payload: { oneOf: [ref("JsCantonError"), ref(channel.responseSchema)] } };
    const id = channel.path.replace(/^\//, "").split("/").map(capitalise).join("");
    docChannels[`${pathPrefix}${channel.path}`] = {
      description: channel.summary,
      subscribe: { operationId: `on${id}`, message: { $ref: `#/components/messages/${responseMessage}` } },
      publish: {
        operationId: `send${id}`,
        message: { $ref: `#/components/messages/${channel.requestSchema}` },
      },
      bindings: { ws: { method: "GET" } },
    };
  }
  return {
    asyncapi: "2.6.0",
    info: {
      title: "JSON Ledger API WebSocket endpoints",
      version: components.apiVersion,
      description:
        "Served by ledger-json-gateway. Authenticate with the subprotocols `daml.ws.auth` and `jwt.token.<JWT>`.",
    },
    channels: docChannels,
    components: {
      schemas: components.schemas,
      messages,
      securitySchemes: {
        httpApiKeyAuth: {
          type: "httpApiKey",
          name: "Sec-WebSocket-Protocol",
          in: "header",
          description: "Ledger API JWT",
        },
      },
    },
  };
}

export function asyncApiYaml(
  channels: readonly WsChannelDoc[],
  components: SchemaComponents,
  pathPrefix: string,
): string {
  return stringify(asyncApiDocument(channels, components, pathPrefix), { aliasDuplicateObjects: false });
}

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

function capitalise(segment: string): string {
  return segment.charAt(0).toUpperCase() + segment.slice(1);
}
