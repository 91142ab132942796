import { parse } from "yaml";
import type { Prng } from "./prng.js";

/**
 * What the fuzzer knows of the API: the gateway's own route table as it publishes it
 * (/docs/openapi and /docs/asyncapi, generated from src/endpoints and schemas/components.json),
 * and the ledger's names it set up for itself (parties, users, a contract...). From these it
 * builds requests that are valid, or nearly, before mutating them.
 */
export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
};

export interface ParamModel {
  name: string;
  type: string;
}

export interface Operation {
  method: string;
  /** Template with `{name}` segments. */
  path: string;
  pathParams: ParamModel[];
  query: ParamModel[];
  body: { kind: "json"; schema: Schema } | { kind: "bytes" } | undefined;
  /** `/livez`, `/docs/...`: answered without a token. */
  open: boolean;
}

export interface ApiModel {
  operations: Operation[];
  /** WebSocket stream paths and the schema of their query frame. */
  streams: { path: string; schema: Schema }[];
  schemas: Record<string, Schema>;
}

interface OpenApiOperation {
  parameters?: { in: string; name: string; schema?: { type?: string; format?: string } }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
}

export function apiModel(openapiYaml: string, asyncapiYaml: string): ApiModel {
  const openapi = parse(openapiYaml) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
    components: { schemas: Record<string, Schema> };
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? [];
      const param = (p: (typeof params)[number]) => ({
        name: p.name,
        type: p.schema?.format ?? p.schema?.type ?? "string",
      });
      const content = op.requestBody?.content;
      const body =
        content === undefined
          ? undefined
          : content["application/octet-stream"] !== undefined
            ? { kind: "bytes" as const }
            : { kind: "json" as const, schema: Object.values(content)[0]?.schema ?? {} };
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map(param),
        query: params.filter((p) => p.in === "query").map(param),
        body,
        // GetLedgerApiVersion is unsecured in Canton, although its spec declares the bearer token.
        open: !path.startsWith("/v2/") || path === "/v2/version",
      });
    }
  }
  const asyncapi = parse(asyncapiYaml) as {
    channels: Record<string, { publish?: { message?: { $ref?: string } } }>;
  };
  // Each query frame's message is named after its request's component schema.
  const streams = Object.entries(asyncapi.channels).map(([path, channel]) => ({
    path,
    schema: { $ref: `#/components/schemas/${channel.publish?.message?.$ref?.split("/").pop()}` },
  }));
  return { operations, streams, schemas: openapi.components.schemas };
}

/** The ledger's names the fuzzer set up, to fill valid requests with. */
export interface LedgerNames {
  parties: string[];
  /** Users the fuzz token may act on (never the fuzz or control users themselves). */
  users: string[];
  contractIds: string[];
  updateIds: string[];
  packageIds: string[];
  synchronizerId: string;
  ledgerEnd: number;
}

const PARTY_FIELDS =
  /^(party|parties|actAs|readAs|owner|issuer|partyId|signatories|observers|witnessParties|filterParty|newOwner|submitter|stakeholders|filter-party)$/;

/** An instance of `schema`, filled with the ledger's real names where a field's name says what it holds. */
export function instanceOf(
  schema: Schema,
  model: ApiModel,
  names: LedgerNames,
  rng: Prng,
  field = "",
  depth = 0,
): unknown {
  if (schema.$ref !== undefined) {
    const target = model.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {};
    return instanceOf(target, model, names, rng, field, depth + 1);
  }
  if (schema.oneOf !== undefined)
    return instanceOf(rng.pick(schema.oneOf), model, names, rng, field, depth + 1);
  if (schema.enum !== undefined) return rng.pick(schema.enum);
  if (field === "createArguments" || field === "createArgument") return iouArguments(names, rng);
  if (field === "templateId")
    return rng.pick(["#gateway-samples:Iou:Iou", `${names.packageIds[0] ?? "x"}:Iou:Iou`]);
  if (field === "choice") return rng.pick(["Iou_Transfer", "Archive", "Iou_Split"]);
  switch (schema.type) {
    case "object":
    case undefined: {
      if (schema.properties === undefined) {
        if (field === "filtersByParty") return { [rng.pick(names.parties)]: {} };
        return {};
      }
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, property] of Object.entries(schema.properties)) {
        const optionalChance = depth > 6 ? 0 : 0.35;
        if (required.has(name) || rng.chance(optionalChance))
          out[name] = instanceOf(property, model, names, rng, name, depth + 1);
      }
      return out;
    }
    case "array": {
      const count = depth > 6 ? 0 : rng.between(PARTY_FIELDS.test(field) ? 1 : 0, 2);
      return Array.from({ length: count }, () =>
        instanceOf(schema.items ?? {}, model, names, rng, field, depth + 1),
      );
    }
    case "integer":
      return integerFor(field, names, rng);
    case "number":
      return rng.between(0, 100);
    case "boolean":
      return rng.chance(0.5);
    default:
      return stringFor(field, schema.format, names, rng);
  }
}

function integerFor(field: string, names: LedgerNames, rng: Prng): number {
  if (/offset|Exclusive|Inclusive/i.test(field)) return rng.between(0, names.ledgerEnd);
  if (/size|limit|max/i.test(field)) return rng.between(1, 20);
  return rng.between(0, 5);
}

export function stringFor(field: string, format: string | undefined, names: LedgerNames, rng: Prng): string {
  if (PARTY_FIELDS.test(field)) return rng.pick(names.parties);
  if (/^(userId|user-id|id)$/.test(field)) return rng.pick(names.users);
  if (/contractId/i.test(field)) return rng.pick(names.contractIds);
  if (/updateId|update-id/i.test(field)) return rng.pick(names.updateIds);
  if (/packageId|package-id/i.test(field)) return rng.pick(names.packageIds);
  if (/synchronizer/i.test(field)) return names.synchronizerId;
  // A path parameter is never empty (that would be another route); a field may be (the default provider).
  if (field === "idp-id") return "fuzz-idp";
  if (/identityProviderId|identity-provider-id/i.test(field)) return "";
  if (/package-?name/i.test(field)) return "gateway-samples";
  if (format === "date-time" || /time/i.test(field))
    return new Date(Date.UTC(2026, 0, 1 + rng.int(300))).toISOString();
  if (/Id$|Hint$/.test(field)) return `fuzz-${rng.string(8, "abcdefghijklmnopqrstuvwxyz0123456789")}`;
  return rng.string(rng.between(0, 12), "abcdefghijklmnopqrstuvwxyz0123456789");
}

export function iouArguments(names: LedgerNames, rng: Prng): Record<string, unknown> {
  return {
    issuer: names.parties[0],
    owner: rng.pick(names.parties),
    currency: rng.pick(["EUR", "USD", "CHF"]),
    amount: String(rng.between(1, 1000)),
    observers: [],
  };
}
