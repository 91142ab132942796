import type protobuf from "protobufjs";
import type { FromJson, ToJson } from "./converters.js";
import { describeJson, InvalidJsonError } from "./json-path.js";

/** proto-loader's object shape (PROTO_OPTIONS), as the gRPC client expects a request field. */
const OBJECT_SHAPE: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  arrays: true,
  objects: true,
};

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
      return type.toObject(type.decode(Buffer.from(json, "base64")), OBJECT_SHAPE);
    } catch {
      throw new InvalidJsonError(path, expected);
    }
  };
}
