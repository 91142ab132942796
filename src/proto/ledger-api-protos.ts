import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync, type Options } from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { PROTO_DIR } from "./project-root.js";

/**
 * How every gRPC message looks in JS, on both sides (gateway client and sandbox server).
 * int64 as strings keeps Daml Int64 values and offsets exact; the JSON codec decides which
 * of them become JSON numbers. `defaults` gives handlers complete objects; `oneofs` adds a
 * virtual property naming the set case.
 */
export const PROTO_OPTIONS: Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
  arrays: true,
  objects: true,
  includeDirs: [PROTO_DIR],
};

/** The proto files of the Ledger API v2 and google.rpc, relative to protos/. */
function ledgerApiProtoFiles(): string[] {
  const roots = [join(PROTO_DIR, "com/daml/ledger/api/v2"), join(PROTO_DIR, "google/rpc")];
  return roots.flatMap((root) => walk(root)).map((file) => relative(PROTO_DIR, file));
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path);
    return entry.name.endsWith(".proto") ? [path] : [];
  });
}

/** The package of the Ledger API v2's services and messages. */
export const LEDGER_API_PACKAGE = "com.daml.ledger.api.v2";

/** One RPC of the Ledger API: how grpc-js frames it, and its messages for the codec. */
interface LedgerApiMethod {
  readonly definition: grpc.MethodDefinition<object, object>;
  readonly requestType: protobuf.Type;
  readonly responseType: protobuf.Type;
  /** Fully qualified, without protobufjs's leading dot: `com.daml.ledger.api.v2.GetUpdatesRequest`. */
  readonly requestTypeName: string;
  readonly responseTypeName: string;
  readonly serverStreaming: boolean;
}

export interface LedgerApiProtos {
  /** grpc-js constructors and service definitions, keyed by package path. */
  readonly grpc: grpc.GrpcObject;
  /** Reflection over the same files, for the JSON codec and status details. */
  readonly root: protobuf.Root;
  /** A service definition by fully qualified name, e.g. `com.daml.ledger.api.v2.VersionService`. */
  service(fullName: string): grpc.ServiceDefinition;
  /** A client constructor by fully qualified service name. */
  client(fullName: string): grpc.ServiceClientConstructor;
  /** A message type by fully qualified name. */
  type(fullName: string): protobuf.Type;
  /**
   * An RPC by its service, relative to the package (`StateService`,
   * `admin.PartyManagementService`), and name; throws for one the protos do not have.
   */
  method(service: string, rpc: string): LedgerApiMethod;
}

let cached: LedgerApiProtos | undefined;

/** Loads the protos once per process: parsing them takes a noticeable fraction of a second. */
export function ledgerApiProtos(): LedgerApiProtos {
  cached ??= load();
  return cached;
}

function load(): LedgerApiProtos {
  const files = ledgerApiProtoFiles();
  const grpcObject = grpc.loadPackageDefinition(loadSync(files, PROTO_OPTIONS));
  const root = new protobuf.Root();
  // Well-known google/protobuf types come bundled with protobufjs; everything else is ours.
  root.resolvePath = (_origin, target) =>
    target.startsWith("google/protobuf/") ? target : join(PROTO_DIR, target);
  root.loadSync(files);
  root.resolveAll();

  const client = (fullName: string): grpc.ServiceClientConstructor => {
    const found = fullName
      .split(".")
      .reduce<unknown>((node, part) => (node as grpc.GrpcObject)?.[part], grpcObject);
    if (typeof found !== "function" || !("service" in found))
      throw new Error(`unknown gRPC service ${fullName}`);
    return found as grpc.ServiceClientConstructor;
  };
  const methods = new Map<string, LedgerApiMethod>();
  const method = (service: string, rpc: string): LedgerApiMethod => {
    const key = `${service}/${rpc}`;
    let known = methods.get(key);
    if (known === undefined) {
      const fullName = `${LEDGER_API_PACKAGE}.${service}`;
      const reflected = root.lookupService(fullName).methods[rpc];
      const definition = client(fullName).service[rpc];
      const requestType = reflected?.resolvedRequestType;
      const responseType = reflected?.resolvedResponseType;
      if (!definition || !requestType || !responseType)
        throw new Error(`unknown gRPC method ${fullName}/${rpc}`);
      known = {
        definition: definition as grpc.MethodDefinition<object, object>,
        requestType,
        responseType,
        requestTypeName: requestType.fullName.slice(1),
        responseTypeName: responseType.fullName.slice(1),
        serverStreaming: reflected.responseStream === true,
      };
      methods.set(key, known);
    }
    return known;
  };
  return {
    grpc: grpcObject,
    root,
    client,
    service: (fullName) => client(fullName).service,
    type: (fullName) => root.lookupType(fullName),
    method,
  };
}
