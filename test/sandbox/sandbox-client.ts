import * as grpc from "@grpc/grpc-js";
import { createSigner } from "fast-jwt";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { decodeStatusDetails, type StatusDetails } from "../../src/proto/status-details.js";

/** A token as clients send them; the unsecured sandbox decodes it without checking the signature. */
export function token(sub = "participant_admin"): string {
  return createSigner({ key: "any-secret", algorithm: "HS256" })({ sub, scope: "daml_ledger_api" });
}

export function bearer(jwt: string | null = token()): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (jwt !== null) metadata.set("authorization", `Bearer ${jwt}`);
  return metadata;
}

type AnyMethod = (this: grpc.Client, ...args: unknown[]) => unknown;
/** A unary call; `Res` names the response message type (a generated `X__Output`) where a test reads it. */
type Unary = <Res = Record<string, unknown>>(request: object, metadata?: grpc.Metadata) => Promise<Res>;

/** A promise-returning client of one Ledger API service of the sandbox at `port`. */
export function serviceClient(port: number, serviceName: string): Record<string, Unary> & { close(): void } {
  const Client = ledgerApiProtos().client(serviceName);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const methods: Record<string, Unary> = {};
  for (const name of Object.keys(Client.service)) {
    methods[name] = <Res>(request: object, metadata = bearer()) =>
      new Promise<Res>((resolve, reject) => {
        const method = (client as unknown as Record<string, AnyMethod>)[name]!;
        method.call(client, request, metadata, (error: grpc.ServiceError | null, response: Res) =>
          error ? reject(error) : resolve(response),
        );
      });
  }
  return Object.assign(methods, { close: () => client.close() });
}

/** Reads a server stream of the sandbox to its end; rejects with the stream's error. */
export function readServerStream(
  port: number,
  serviceName: string,
  method: string,
  request: object,
): Promise<unknown[]> {
  const Client = ledgerApiProtos().client(serviceName);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const start = (client as unknown as Record<string, AnyMethod>)[method]!;
  const call = start.call(client, request, bearer()) as grpc.ClientReadableStream<unknown>;
  const received: unknown[] = [];
  return new Promise<unknown[]>((resolve, reject) => {
    call.on("data", (message) => received.push(message));
    call.on("error", reject);
    call.on("end", () => resolve(received));
  }).finally(() => client.close());
}

/** The rejection of `promise` as a gRPC error, with its decoded Canton status details. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<grpc.ServiceError & { status: StatusDetails }> {
  try {
    await promise;
  } catch (error) {
    const serviceError = error as grpc.ServiceError;
    const status = decodeStatusDetails(serviceError.metadata);
    if (status === undefined) throw new Error(`no status details on ${serviceError.message}`);
    return Object.assign(serviceError, { status });
  }
  throw new Error("expected the call to fail");
}

export const SERVICES = {
  version: "com.daml.ledger.api.v2.VersionService",
  state: "com.daml.ledger.api.v2.StateService",
  parties: "com.daml.ledger.api.v2.admin.PartyManagementService",
} as const;
