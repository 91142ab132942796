import type protobuf from "protobufjs";
import { PROTO_OPTIONS } from "../../proto/ledger-api-protos.js";
import type { FromJson, ToJson } from "./converters.js";
import { describeJson, InvalidJsonError } from "./json-path.js";

/**
 * A message field the JSON API carries as the base64 of its protobuf serialization (rule
 * `serialized`): the object is encoded on the way out and decoded on the way in.
 */
export function serializedToJson(type: protobuf.Type): ToJson {
  return (value) => Buffer.from(type.encode(type.fromObject(value as object)).finish()).toString("base64");
}

export function serializedFromJson(type: protobuf.Type): FromJson {
  const expected = `expected the base64 of a serialized ${type.name}`;
  return (json, path) => {
    if (typeof json !== "string") throw new InvalidJsonError(path, `${expected}, got ${describeJson(json)}`);
    try {
      // proto-loader's object shape, as the gRPC client expects a request field.
      return type.toObject(type.decode(Buffer.from(json, "base64")), PROTO_OPTIONS);
    } catch {
      throw new InvalidJsonError(path, expected);
    }
  };
}
