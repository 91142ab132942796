import type { Any__Output, Identifier__Output } from "../../proto/ledger-api-types.js";
import { isoToTimestamp, type ProtoTimestamp, timestampToIso } from "../rules/timestamps.js";
import {
  identifierText,
  protoAnyUnknownFields,
  splitIdentifier,
  UNTYPED_VALUE_INPUT,
  UNTYPED_VALUE_OUTPUT,
  type WellKnownKind,
} from "../rules/well-known.js";
import type { ObjectConverter } from "./converters.js";
import { describeJson, InvalidJsonError } from "./json-path.js";

/** The well-known kinds of rules/well-known.ts between proto-loader objects and JSON objects. */
export const WELL_KNOWN_OBJECTS: Readonly<Record<WellKnownKind, ObjectConverter>> = {
  timestamp: {
    toJson: (m) => timestampToIso(m as ProtoTimestamp),
    fromJson: (json, path) => {
      const ts = typeof json === "string" ? isoToTimestamp(json) : undefined;
      if (ts === undefined)
        throw new InvalidJsonError(path, `expected an ISO-8601 timestamp, got ${describeJson(json)}`);
      return ts;
    },
  },
  empty: { toJson: () => ({}), fromJson: () => ({}) },
  // protobufjs bundles Any with its proto field name `type_url`.
  protoAny: {
    toJson: (m) => {
      const any = m as Partial<Any__Output> & { typeUrl?: string };
      return {
        typeUrl: any.type_url ?? any.typeUrl ?? "",
        value: Buffer.from(any.value ?? new Uint8Array()).toString("base64"),
        unknownFields: protoAnyUnknownFields(),
      };
    },
    fromJson: (json, path) => {
      const any = json as { typeUrl?: unknown; value?: unknown } | null;
      if (
        any === null ||
        typeof any !== "object" ||
        typeof any.typeUrl !== "string" ||
        typeof any.value !== "string"
      ) {
        throw new InvalidJsonError(path, `expected {typeUrl, value}, got ${describeJson(json)}`);
      }
      return { type_url: any.typeUrl, value: Buffer.from(any.value, "base64") };
    },
  },
  identifier: {
    toJson: (m) => identifierText(m as Identifier__Output),
    fromJson: (json, path) => {
      const parts = typeof json === "string" ? splitIdentifier(json) : undefined;
      if (parts === undefined) {
        // Canton 3.6's words for it (IdentifierConverter), after the JSON path of ours.
        throw new InvalidJsonError(
          path,
          typeof json === "string"
            ? `Invalid identifier format (${json}) not matching the expected format (<package>:<moduleName>:<entityName>)`
            : `expected an identifier <package>:<moduleName>:<entityName>, got ${describeJson(json)}`,
        );
      }
      return parts;
    },
  },
  untypedValue: {
    toJson: () => {
      throw new Error(UNTYPED_VALUE_OUTPUT);
    },
    fromJson: (_json, path) => {
      throw new InvalidJsonError(path, UNTYPED_VALUE_INPUT);
    },
  },
};
