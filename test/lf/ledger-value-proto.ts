/**
 * Test helper: a real protobuf round trip of a Ledger API Value through protobufjs, with the
 * options @grpc/proto-loader uses, so the codec's Value objects are proven to be what the
 * gRPC layer sends and receives.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import type { LedgerValue } from "../../src/lf/value-shapes.js";

const PROTOS = join(import.meta.dirname, "..", "..", "protos");

let valueType: protobuf.Type | undefined;

function type(): protobuf.Type {
  if (valueType === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => {
      const local = join(PROTOS, target);
      return existsSync(local) ? local : target;
    };
    root.loadSync("com/daml/ledger/api/v2/value.proto", { keepCase: false });
    valueType = root.lookupType("com.daml.ledger.api.v2.Value");
  }
  return valueType;
}

export function protoRoundTrip(value: LedgerValue): LedgerValue {
  const t = type();
  const bytes = t.encode(t.fromObject(value as unknown as Record<string, unknown>)).finish();
  return t.toObject(t.decode(bytes), {
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    bytes: Buffer,
  }) as unknown as LedgerValue;
}
