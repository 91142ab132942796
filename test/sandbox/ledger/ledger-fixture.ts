import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import type { AllocatePartyResponse__Output } from "../../../src/proto/ledger-api-types.js";
import { permissiveAuthorizer } from "../../../src/sandbox/auth/authorization.js";
import { SAMPLE_PACKAGE_ID } from "../../../src/sandbox/sample-package/index.js";
import { type RunningSandbox, type SandboxOptions, startSandbox } from "../../../src/sandbox/sandbox.js";
import { bearer, SERVICES, serviceClient } from "../sandbox-client.js";

/** Test fixture: a sandbox with every ledger service, clients, and builders for the sample package. */
export const LEDGER_SERVICES = {
  command: "com.daml.ledger.api.v2.CommandService",
  submission: "com.daml.ledger.api.v2.CommandSubmissionService",
  completion: "com.daml.ledger.api.v2.CommandCompletionService",
  update: "com.daml.ledger.api.v2.UpdateService",
  eventQuery: "com.daml.ledger.api.v2.EventQueryService",
  contract: "com.daml.ledger.api.v2.ContractService",
} as const;

type Client = ReturnType<typeof serviceClient>;
// biome-ignore lint/suspicious/noExplicitAny: test code reads loosely typed proto objects
export type Msg = any;

export interface LedgerFixture {
  sandbox: RunningSandbox;
  command: Client;
  submission: Client;
  update: Client;
  state: Client;
  eventQuery: Client;
  contract: Client;
  parties: Client;
  allocate(hint: string): Promise<string>;
  close(): Promise<void>;
}

export async function ledgerFixture(options: SandboxOptions = {}): Promise<LedgerFixture> {
  const sandbox = await startSandbox({
    port: 0,
    authorizer: permissiveAuthorizer(),
    idleStreamOffsetCheckpointTimeoutMs: 200,
    ...options,
  });
  const clients = {
    command: serviceClient(sandbox.port, LEDGER_SERVICES.command),
    submission: serviceClient(sandbox.port, LEDGER_SERVICES.submission),
    update: serviceClient(sandbox.port, LEDGER_SERVICES.update),
    state: serviceClient(sandbox.port, SERVICES.state),
    eventQuery: serviceClient(sandbox.port, LEDGER_SERVICES.eventQuery),
    contract: serviceClient(sandbox.port, LEDGER_SERVICES.contract),
    parties: serviceClient(sandbox.port, SERVICES.parties),
  };
  let counter = 0;
  return {
    sandbox,
    ...clients,
    allocate: async (hint) => {
      counter += 1;
      const response = await clients.parties.AllocateParty!<AllocatePartyResponse__Output>({
        partyIdHint: `${hint}${counter}`,
      });
      return response.partyDetails?.party ?? "";
    },
    close: async () => {
      for (const client of Object.values(clients)) client.close();
      await sandbox.stop();
    },
  };
}

// ------------------------------------------------------------------ values

export const v = {
  party: (party: string) => ({ party }),
  text: (text: string) => ({ text }),
  numeric: (numeric: string) => ({ numeric }),
  int64: (n: number) => ({ int64: String(n) }),
  list: (...elements: object[]) => ({ list: { elements } }),
  record: (fields: Record<string, object>) => ({
    record: { fields: Object.entries(fields).map(([label, value]) => ({ label, value })) },
  }),
  unit: () => ({ record: { fields: [] } }),
};

export const id = (moduleName: string, entityName: string, packageId = SAMPLE_PACKAGE_ID) => ({
  packageId,
  moduleName,
  entityName,
});
export const IOU = id("Iou", "Iou");
export const ASSET = id("Iou", "Asset");
export const ACCOUNT = id("Account", "Account");
export const TICK = id("Bench", "Tick");

export const iouArgs = (
  issuer: string,
  owner: string,
  amount: string,
  currency = "USD",
  observers: string[] = [],
) =>
  v.record({
    issuer: v.party(issuer),
    owner: v.party(owner),
    currency: v.text(currency),
    amount: v.numeric(amount),
    observers: v.list(...observers.map(v.party)),
  }).record;

export const accountArgs = (bank: string, holder: string, number: string, balance: string) =>
  v.record({
    bank: v.party(bank),
    holder: v.party(holder),
    number: v.text(number),
    balance: v.numeric(balance),
  }).record;

export const createIou = (
  issuer: string,
  owner: string,
  amount: string,
  currency = "USD",
  observers: string[] = [],
) => ({
  create: { templateId: IOU, createArguments: iouArgs(issuer, owner, amount, currency, observers) },
});

export const exercise = (templateId: object, contractId: string, choice: string, argument: object) => ({
  exercise: { templateId, contractId, choice, choiceArgument: argument },
});

let commandCounter = 0;
export const commandId = (prefix = "cmd") => `${prefix}-${process.pid}-${++commandCounter}`;

export function commands(actAs: string[], list: object[], extra: Record<string, unknown> = {}) {
  return { commands: { userId: "alice-app", commandId: commandId(), actAs, commands: list, ...extra } };
}

export const wildcard = (parties: string[], blob = false) => ({
  filtersByParty: Object.fromEntries(
    parties.map((p) => [p, { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: blob } }] }]),
  ),
  verbose: true,
});

export const txFormat = (eventFormat: object, shape = "TRANSACTION_SHAPE_LEDGER_EFFECTS") => ({
  eventFormat,
  transactionShape: shape,
});

/** Submits and returns the transaction in LEDGER_EFFECTS shape for the submitters. */
export async function submitTx(
  f: LedgerFixture,
  actAs: string[],
  list: object[],
  extra: Record<string, unknown> = {},
): Promise<Msg> {
  const response = await f.command.SubmitAndWaitForTransaction!({
    ...commands(actAs, list, extra),
    transactionFormat: txFormat(wildcard(actAs)),
  });
  return response.transaction;
}

export const createdOf = (tx: Msg): Msg[] =>
  tx.events.filter((e: Msg) => e.created).map((e: Msg) => e.created);

/** Reads a server stream until `count` messages arrived (then cancels) or it ends. */
export function readStream(
  port: number,
  serviceName: string,
  method: string,
  request: object,
  count = Number.POSITIVE_INFINITY,
  metadata: grpc.Metadata = bearer(),
): Promise<Msg[]> {
  const Client = ledgerApiProtos().client(serviceName);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = (
    client as unknown as Record<string, (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<Msg>>
  )[method]!.call(client, request, metadata);
  const received: Msg[] = [];
  return new Promise<Msg[]>((resolve, reject) => {
    call.on("data", (message: Msg) => {
      received.push(message);
      if (received.length === count) {
        call.cancel();
        resolve(received);
      }
    });
    call.on("error", (error: grpc.ServiceError) => {
      if (error.code === grpc.status.CANCELLED) resolve(received);
      else reject(error);
    });
    call.on("end", () => resolve(received));
  }).finally(() => client.close());
}

/** Reads a server stream for `windowMs`, then cancels it: what a client saw in that time. */
export async function readFor(
  port: number,
  serviceName: string,
  method: string,
  request: object,
  windowMs: number,
): Promise<Msg[]> {
  const Client = ledgerApiProtos().client(serviceName);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = (
    client as unknown as Record<string, (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<Msg>>
  )[method]!.call(client, request, bearer());
  const received: Msg[] = [];
  const timer = setTimeout(() => call.cancel(), windowMs);
  return new Promise<Msg[]>((resolve, reject) => {
    call.on("data", (message: Msg) => received.push(message));
    call.on("error", (error: grpc.ServiceError) => {
      if (error.code === grpc.status.CANCELLED) resolve(received);
      else reject(error);
    });
    call.on("end", () => resolve(received));
  }).finally(() => {
    clearTimeout(timer);
    client.close();
  });
}
