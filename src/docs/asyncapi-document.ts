import { stringify } from "yaml";
import type { SchemaComponents } from "../endpoints/schema-components.js";
import { type ApiVersion, type Availability, availableIn } from "../proto/api-version.js";

/** A WebSocket endpoint as the docs describe it: one request frame in, a stream of frames out. */
export interface WsChannelDoc {
  path: string;
  summary: string;
  /** Component schema of the client's request frame. */
  requestSchema: string;
  /** Component schema of each element frame (errors are JsCantonError frames). */
  responseSchema: string;
  /** The Canton releases that have the channel; absent: every known one. */
  availability?: Availability;
}

/** AsyncAPI 2.6.0 of the WebSocket endpoints of Canton release `version`, built from their table and the release's shapes. */
function asyncApiDocument(
  channels: readonly WsChannelDoc[],
  components: SchemaComponents,
  pathPrefix: string,
  version: ApiVersion,
): object {
  const messages: Record<string, object> = { TokenRenewal: TOKEN_RENEWAL, TokenRenewed: TOKEN_RENEWED };
  const docChannels: Record<string, object> = {};
  for (const channel of channels) {
    if (!availableIn(channel.availability, version)) continue;
    const responseMessage = `Either_JsCantonError_${channel.responseSchema}`;
    messages[channel.requestSchema] = { payload: ref(channel.requestSchema) };
    messages[responseMessage] = { payload: { oneOf: [ref("JsCantonError"), ref(channel.responseSchema)] } };
    const id = channel.path.replace(/^\//, "").split("/").map(capitalise).join("");
    docChannels[`${pathPrefix}${channel.path}`] = {
      description: channel.summary,
      subscribe: {
        operationId: `on${id}`,
        message: {
          oneOf: [
            { $ref: `#/components/messages/${responseMessage}` },
            { $ref: "#/components/messages/TokenRenewed" },
          ],
        },
      },
      publish: {
        operationId: `send${id}`,
        message: {
          oneOf: [
            { $ref: `#/components/messages/${channel.requestSchema}` },
            { $ref: "#/components/messages/TokenRenewal" },
          ],
        },
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
  version: ApiVersion,
): string {
  return stringify(asyncApiDocument(channels, components, pathPrefix, version), {
    aliasDuplicateObjects: false,
  });
}

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

/** The client's in-band token renewal (an extension of ours; Canton's clients never send it). */
const TOKEN_RENEWAL = {
  name: "TokenRenewal",
  summary: "Renews the stream's token (extension of ledger-json-gateway)",
  description:
    "Any frame after the request frame. The gateway asks the ledger whether the token, which must be the same user's, may read this stream from the last offset delivered; if so the stream goes on under it (its expiry moves to the token's `exp`, and the stream's ledger calls move onto it, without a gap or a duplicate). If not, a JsCantonError frame whose `context.token_renewal` is `refused` says why, and the stream goes on under its old token until that one expires; so on the active contracts, a snapshot that cannot move onto another token. With `acknowledge: true` an accepted renewal is answered a TokenRenewed frame; without it, nothing answers an accepted renewal.",
  payload: {
    type: "object",
    required: ["token"],
    properties: {
      token: { type: "string", description: "A Ledger API JWT of the stream's user" },
      acknowledge: {
        type: "boolean",
        description: "Ask for a TokenRenewed frame when the ledger accepts the token (default false)",
      },
    },
  },
};

/**
 * The answer to an accepted renewal that asked for one (an extension of ours: only a client that
 * sends `acknowledge: true` ever gets it, so Canton's clients never do).
 */
const TOKEN_RENEWED = {
  name: "TokenRenewed",
  summary: "An accepted token renewal (extension of ledger-json-gateway)",
  description:
    "Sent, in order with the elements, when the ledger accepted the token of a TokenRenewal frame that asked for it with `acknowledge: true`: from here on the stream runs on that token, until `expiresAt` (the token's `exp`; absent when it has none). A refused renewal is a JsCantonError frame whose `context.token_renewal` is `refused`; the stream goes on either way.",
  payload: {
    type: "object",
    required: ["tokenRenewed"],
    properties: {
      tokenRenewed: {
        type: "object",
        properties: {
          expiresAt: { type: "string", format: "date-time", description: "The renewed token's expiry" },
        },
      },
    },
  },
};

function capitalise(segment: string): string {
  return segment.charAt(0).toUpperCase() + segment.slice(1);
}
