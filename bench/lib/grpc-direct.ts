import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";

/**
 * The bench's direct gRPC client of the ledger, the baseline every gateway ratio is taken
 * against: grpc-js with proto-loader's decoded objects, as a Node service talking to the ledger
 * without the gateway would use it. Not the gateway's LedgerClient: its calls go over the
 * gateway's own lean HTTP/2 channel, which is part of what the bench measures, not of the baseline.
 */
export class DirectLedger {
  private readonly commands: ServiceClient;
  private readonly updates: ServiceClient;
  private readonly metadata = new grpc.Metadata();

  constructor(port: number, token: string) {
    const protos = ledgerApiProtos();
    const target = `127.0.0.1:${port}`;
    const insecure = grpc.credentials.createInsecure();
    this.commands = new (protos.client("com.daml.ledger.api.v2.CommandService"))(target, insecure);
    // One channel per service, as generated clients make them by default.
    this.updates = new (protos.client("com.daml.ledger.api.v2.UpdateService"))(target, insecure);
    this.metadata.set("authorization", `Bearer ${token}`);
  }

  submitAndWait(request: object): Promise<void> {
    const call = this.commands.SubmitAndWait as UnaryMethod;
    return new Promise((resolve, reject) => {
      call.call(this.commands, request, this.metadata, { deadline: Date.now() + 60_000 }, (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  /** Reads GetUpdates to its end, handing each decoded message to `onMessage`. */
  readUpdates(
    request: object,
    onMessage: (message: { transaction?: { events: unknown[] } }) => void,
  ): Promise<void> {
    const open = this.updates.GetUpdates as StreamMethod;
    return new Promise((resolve, reject) => {
      const call = open.call(this.updates, request, this.metadata);
      call.on("data", onMessage);
      call.on("end", resolve);
      call.on("error", reject);
    });
  }

  close(): void {
    this.commands.close();
    this.updates.close();
  }
}

type ServiceClient = InstanceType<grpc.ServiceClientConstructor>;
/**
 * GetUpdates of `party`'s transactions (ACS delta, every template) from the start to
 * `endInclusive`, in proto-loader's shape: the direct twin of the JSON request the gateway's
 * readers send (scenarios/fanout.ts `updatesRequest`).
 */
export const grpcUpdatesRequest = (party: string, endInclusive: number) => ({
  beginExclusive: "0",
  endInclusive: String(endInclusive),
  updateFormat: {
    includeTransactions: {
      eventFormat: {
        filtersByParty: { [party]: { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: false } }] } },
      },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  },
});

// proto-loader's client methods are untyped.
type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null) => void,
) => grpc.ClientUnaryCall;
type StreamMethod = (request: object, metadata: grpc.Metadata) => grpc.ClientReadableStream<never>;
