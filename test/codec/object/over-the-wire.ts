import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";

/** A message as the gRPC client hands it over: encoded, then decoded with the gateway's proto-loader options. */
export function overTheWire(typeName: string, value: object): unknown {
  const type = ledgerApiProtos().type(typeName);
  const bytes = type.encode(type.fromObject(value)).finish();
  return type.toObject(type.decode(bytes), {
    longs: String,
    enums: String,
    bytes: Buffer,
    defaults: true,
    oneofs: true,
  });
}
