import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../proto/ledger-api-protos.js";

/** Service names relative to `com.daml.ledger.api.v2`, e.g. `StateService`, `admin.PartyManagementService`. */
export type LedgerService = string;

export interface CallOutcome {
  service: string;
  method: string;
  /** gRPC status name, e.g. OK, NOT_FOUND. */
  code: string;
  seconds: number;
}

export interface LedgerClientOptions {
  /** host:port */
  target: string;
  tls?: { caCert?: string; clientCert?: string; clientKey?: string };
  /** Deadline of unary calls. */
  deadlineMs: number;
  /** Told the outcome of every call, for metrics. */
  onCallEnd?: (outcome: CallOutcome) => void;
}

export interface ServerStreamOptions {
  /**
   * Hand over each response message as its raw bytes (a Buffer) instead of the decoded
   * object: for callers that transcode the wire bytes themselves (codec/stream-transcoder).
   */
  rawResponses?: boolean;
}

const API_PACKAGE = "com.daml.ledger.api.v2";
const FLOW_CONTROL_WINDOW_BYTES = 1024 * 1024;

/**
 * One gRPC channel to the participant, shared by every service. The caller's token travels
 * as `authorization` metadata of the one call it came with and is never kept.
 */
export class LedgerClient {
  private readonly client: grpc.Client;
  private readonly methods = new Map<string, grpc.MethodDefinition<object, object>>();

  constructor(private readonly options: LedgerClientOptions) {
    this.client = new grpc.Client(options.target, credentials(options.tls), {
      "grpc.max_receive_message_length": 64 * 1024 * 1024,
      "grpc.max_send_message_length": 64 * 1024 * 1024,
      "grpc.keepalive_time_ms": 30_000,
      // HTTP/2 flow-control window per stream. The 64 KiB default makes a busy gateway stall
      // the ledger between window updates; 1 MiB keeps streams flowing while a paused call
      // still holds the ledger back within 1 MiB.
      "grpc-node.flow_control_window": FLOW_CONTROL_WINDOW_BYTES,
    });
  }

  unary<Res = Record<string, unknown>>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
  ): Promise<Res> {
    const definition = this.method(service, method);
    const started = process.hrtime.bigint();
    return new Promise<Res>((resolve, reject) => {
      this.client.makeUnaryRequest(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        authMetadata(token),
        { deadline: Date.now() + this.options.deadlineMs },
        (error, response) => {
          this.report(service, method, error ? error.code : grpc.status.OK, started);
          if (error) reject(error);
          else resolve(response as Res);
        },
      );
    });
  }

  /** Opens a server-streaming call; `serverStream` (src/ledger/server-stream.ts) makes it an Observable. */
  serverStream<Res = Record<string, unknown>>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options: ServerStreamOptions = {},
  ): grpc.ClientReadableStream<Res> {
    const definition = this.method(service, method);
    const started = process.hrtime.bigint();
    const call = this.client.makeServerStreamRequest(
      definition.path,
      definition.requestSerialize,
      options.rawResponses ? rawBytes : definition.responseDeserialize,
      request,
      authMetadata(token),
      {},
    ) as grpc.ClientReadableStream<Res>;
    call.on("status", (status: grpc.StatusObject) => this.report(service, method, status.code, started));
    return call;
  }

  /** Resolves once the channel is connected; rejects after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Whether the channel can reach the ledger within `timeoutMs` (readiness probe). */
  async isReady(timeoutMs: number): Promise<boolean> {
    try {
      await this.waitForReady(timeoutMs);
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.client.close();
  }

  private method(service: LedgerService, method: string): grpc.MethodDefinition<object, object> {
    const key = `${service}/${method}`;
    let definition = this.methods.get(key);
    if (!definition) {
      const found = ledgerApiProtos().service(`${API_PACKAGE}.${service}`)[method];
      if (!found) throw new Error(`unknown gRPC method ${API_PACKAGE}.${service}/${method}`);
      definition = found as grpc.MethodDefinition<object, object>;
      this.methods.set(key, definition);
    }
    return definition;
  }

  private report(service: string, method: string, code: grpc.status, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.options.onCallEnd?.({ service, method, code: grpc.status[code] ?? String(code), seconds });
  }
}

/** The identity deserializer: grpc-js passes each message's bytes as a Buffer. */
const rawBytes = (bytes: Buffer): Buffer => bytes;

function authMetadata(token: string | undefined): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

function credentials(tls: LedgerClientOptions["tls"]): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const read = (path?: string) => (path === undefined ? null : readFileSync(path));
  return grpc.credentials.createSsl(read(tls.caCert), read(tls.clientKey), read(tls.clientCert));
}
