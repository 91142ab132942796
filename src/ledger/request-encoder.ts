import protobuf from "protobufjs";

/** A request object (proto-loader's input shape) -> its message bytes. */
export type RequestEncoder = (request: object) => Uint8Array;

const encoders = new Map<protobuf.Type, RequestEncoder>();

/**
 * How requests of `type` are encoded: `serialize` (proto-loader's: `fromObject`, then `encode`)
 * unless `encode` alone writes the same bytes from the object the codec built. `fromObject`
 * copies the whole request into message instances before a byte is written (half of a command's
 * encoding, and its garbage); what it converts on the way, `encode` converts the same way
 * (int64 strings through Long, base64 strings of bytes, numbers and booleans coerced), except
 * enum names, which `encode` cannot write, and google.protobuf.Any, which has a JSON form of its
 * own in protobufjs: a type whose messages hold either, anywhere, keeps `serialize`. Decided once
 * per type.
 */
export function requestEncoder(type: protobuf.Type, serialize: RequestEncoder): RequestEncoder {
  let encoder = encoders.get(type);
  if (encoder === undefined) {
    encoder = encodesAsIs(type, new Set()) ? (request) => type.encode(request).finish() : serialize;
    encoders.set(type, encoder);
  }
  return encoder;
}

function encodesAsIs(type: protobuf.Type, seen: Set<protobuf.Type>): boolean {
  if (seen.has(type)) return true;
  seen.add(type);
  if (type.fullName === ".google.protobuf.Any") return false;
  for (const field of type.fieldsArray) {
    const resolved = field.resolve().resolvedType;
    if (resolved instanceof protobuf.Enum) return false;
    if (resolved instanceof protobuf.Type && !encodesAsIs(resolved, seen)) return false;
  }
  return true;
}
