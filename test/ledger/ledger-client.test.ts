import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { isGrpcError, jsCantonErrorOfGrpc } from "../../src/errors/error-mapping.js";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { DEFAULT_API_VERSION } from "../../src/proto/api-version.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, token } from "../sandbox/sandbox-client.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";

const API = "com.daml.ledger.api.v2";

/**
 * A ledger that misbehaves as the sandbox did before its errors had a size budget: one method
 * answers with a 100,000-character trailer field, past nghttp2's 64 KiB HPACK limit. The client's
 * HTTP/2 session dies on it without closing, so every later call on that connection waits.
 */
async function startOversizedTrailerLedger(): Promise<{ port: number; server: grpc.Server }> {
  const protos = ledgerApiProtos();
  const server = new grpc.Server();
  server.addService(protos.service(`${API}.VersionService`), {
    GetLedgerApiVersion: (_call: unknown, callback: grpc.sendUnaryData<object>) =>
      callback(null, { version: "3.5.0" }),
  });
  server.addService(protos.service(`${API}.EventQueryService`), {
    GetEventsByContractId: (_call: unknown, callback: grpc.sendUnaryData<object>) => {
      const metadata = new grpc.Metadata();
      metadata.set("echoed-contract-id", "x".repeat(100_000));
      callback({ code: grpc.status.NOT_FOUND, details: "not found", metadata });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { port, server };
}

describe("LedgerClient contains a call that kills its connection", () => {
  let ledger: { port: number; server: grpc.Server };
  let client: LedgerClient;
  before(async () => {
    ledger = await startOversizedTrailerLedger();
    // Short pings so that the test does not wait the production 10 s + 5 s.
    client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 30_000,
      keepalive: { timeMs: 1_000, timeoutMs: 1_000 },
    });
  });
  after(() => {
    client.close();
    ledger.server.forceShutdown();
  });

  it("answers other calls made after a call whose trailer wedged the HTTP/2 session", async () => {
    const bad = client.unary("EventQueryService", "GetEventsByContractId", { contractId: "00" }, undefined);
    const badOutcome = bad.then(
      () => "answered",
      (error: grpc.ServiceError) => error.code,
    );
    // Let the oversized trailer arrive first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const version = await client.unary<{ version: string }>(
      "VersionService",
      "GetLedgerApiVersion",
      {},
      undefined,
    );
    strictEqual(version.version, "3.5.0");
    // The call that killed the connection fails (it is not answered, and does not hang).
    ok([grpc.status.UNAVAILABLE, grpc.status.INTERNAL].includes((await badOutcome) as grpc.status));
    ok(await client.isReady(5_000), "the client reaches the ledger again");
  });
});

/** A ledger with only the standard gRPC health service, answering `status`. */
async function startHealthOnlyLedger(status: number): Promise<{ port: number; server: grpc.Server }> {
  const server = new grpc.Server();
  const bytes = (b: Buffer) => b;
  server.addService(
    {
      Check: {
        path: "/grpc.health.v1.Health/Check",
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      },
    },
    {
      Check: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) =>
        callback(null, Buffer.from([0x08, status])),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { port, server };
}

describe("LedgerClient.isReady asks the ledger's gRPC health service", () => {
  for (const [status, ready] of [
    [1, true],
    [2, false],
  ] as const) {
    it(`is ${ready} when the ledger answers ${status === 1 ? "SERVING" : "NOT_SERVING"}`, async () => {
      const ledger = await startHealthOnlyLedger(status);
      const client = new LedgerClient({ target: `127.0.0.1:${ledger.port}`, deadlineMs: 5_000 });
      try {
        strictEqual(await client.isReady(5_000), ready);
      } finally {
        client.close();
        ledger.server.forceShutdown();
      }
    });
  }

  it("is false when nothing answers", async () => {
    const ledger = await startHealthOnlyLedger(1);
    const port = ledger.port;
    ledger.server.forceShutdown();
    const client = new LedgerClient({ target: `127.0.0.1:${port}`, deadlineMs: 5_000 });
    try {
      strictEqual(await client.isReady(1_000), false);
    } finally {
      client.close();
    }
  });
});

describe("LedgerClient.unary answers as grpc-js did, against the sandbox", () => {
  let sandbox: RunningSandbox;
  let client: LedgerClient;
  let grpcJs: grpc.Client;
  const jwt = token();
  const updateById = (API_METHOD: grpc.MethodDefinition<object, object>) =>
    new Promise<grpc.ServiceError>((resolve, reject) =>
      grpcJs.makeUnaryRequest(
        API_METHOD.path,
        API_METHOD.requestSerialize,
        API_METHOD.responseDeserialize,
        UNKNOWN_UPDATE,
        bearer(jwt),
        (error) => (error ? resolve(error) : reject(new Error("answered"))),
      ),
    );
  const UNKNOWN_UPDATE = { updateId: "1220ab", updateFormat: {} };

  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = new LedgerClient({ target: `127.0.0.1:${sandbox.port}`, deadlineMs: 10_000 });
    grpcJs = new grpc.Client(`127.0.0.1:${sandbox.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    grpcJs.close();
    await sandbox.stop();
  });

  it("decodes an answer to the same object, and hands over the same bytes raw", async () => {
    const version = await client.unary<{ version: string }>("VersionService", "GetLedgerApiVersion", {}, jwt);
    strictEqual(version.version, DEFAULT_API_VERSION);
    const raw = await client.unary("VersionService", "GetLedgerApiVersion", {}, jwt, { rawResponse: true });
    const definition = ledgerApiProtos().service(`${API}.VersionService`).GetLedgerApiVersion!;
    deepStrictEqual(definition.responseDeserialize(raw), version);
  });

  it("fails a Canton-style error into the same JsCantonError as grpc-js's error for the same call", async () => {
    const definition = ledgerApiProtos().service(`${API}.UpdateService`).GetUpdateById!;
    const viaGrpcJs = await updateById(definition as grpc.MethodDefinition<object, object>);
    let lean: unknown;
    try {
      await client.unary("UpdateService", "GetUpdateById", UNKNOWN_UPDATE, jwt);
    } catch (error) {
      lean = error;
    }
    ok(isGrpcError(lean), "a grpc-js-shaped error");
    strictEqual(lean.code, viaGrpcJs.code);
    // Each call has its own trace id; everything else is the same.
    const sameTrace = (text: string) => text.replaceAll(/[0-9a-f]{8,32}/g, "<tid>");
    strictEqual(sameTrace(lean.details), sameTrace(viaGrpcJs.details));
    deepStrictEqual(
      Object.keys(lean.metadata.getMap()).sort(),
      Object.keys(viaGrpcJs.metadata.getMap()).sort(),
    );
    const leanError = jsCantonErrorOfGrpc(lean);
    strictEqual(leanError.code, "UPDATE_NOT_FOUND");
    deepStrictEqual(
      JSON.parse(sameTrace(JSON.stringify(leanError))),
      JSON.parse(sameTrace(JSON.stringify(jsCantonErrorOfGrpc(viaGrpcJs)))),
    );
  });
});

describe("LedgerClient.unary drops the connection of a frozen ledger (keepalive)", () => {
  let sandbox: SandboxProcess;
  let client: LedgerClient;
  const jwt = token();
  before(async () => {
    sandbox = await startSandboxProcess();
    // Short pings, a long deadline: only the keepalive can end a call to the frozen ledger soon.
    client = new LedgerClient({
      target: `127.0.0.1:${sandbox.port}`,
      deadlineMs: 60_000,
      keepalive: { timeMs: 500, timeoutMs: 500 },
    });
  });
  after(async () => {
    client.close();
    await sandbox.kill();
  });

  it("fails a call to the SIGSTOPped sandbox with UNAVAILABLE, and answers after SIGCONT", async () => {
    const version = () => client.unary<{ version: string }>("VersionService", "GetLedgerApiVersion", {}, jwt);
    strictEqual((await version()).version, DEFAULT_API_VERSION);
    sandbox.child.kill("SIGSTOP");
    let frozen: unknown;
    try {
      await version();
    } catch (error) {
      frozen = error;
    } finally {
      sandbox.child.kill("SIGCONT");
    }
    ok(isGrpcError(frozen), `a gRPC error, not ${String(frozen)}`);
    strictEqual(frozen.code, grpc.status.UNAVAILABLE, frozen.details);
    strictEqual((await version()).version, DEFAULT_API_VERSION);
  });
});
