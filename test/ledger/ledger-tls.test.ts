import { ok, strictEqual } from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { isGrpcError } from "../../src/errors/error-mapping.js";
import { LedgerClient, type LedgerClientOptions } from "../../src/ledger/ledger-client.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";

/**
 * A test CA, a server certificate for 127.0.0.1 and a client certificate, made with the openssl
 * CLI in a temporary folder: what an operator hands `ledger.tls`.
 */
function makeCertificates(dir: string) {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const key = (name: string) =>
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}.key`);
  key("ca");
  openssl(
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-subj",
    "/CN=test ledger CA",
    "-days",
    "2",
    "-out",
    "ca.pem",
  );
  for (const [name, extensions] of [
    ["server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"],
    ["client", "extendedKeyUsage=clientAuth\n"],
  ] as const) {
    key(name);
    openssl("req", "-new", "-key", `${name}.key`, "-subj", `/CN=${name}`, "-out", `${name}.csr`);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(
      ...["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"],
      ...["-days", "2", "-extfile", `${name}.ext`, "-out", `${name}.pem`],
    );
  }
  const path = (file: string) => join(dir, file);
  return {
    ca: path("ca.pem"),
    serverCert: path("server.pem"),
    serverKey: path("server.key"),
    clientCert: path("client.pem"),
    clientKey: path("client.key"),
  };
}

/** A grpc-js VersionService over TLS, asking clients for a certificate of the CA when `mutual`. */
async function startTlsLedger(files: ReturnType<typeof makeCertificates>, mutual: boolean) {
  const server = new grpc.Server();
  server.addService(ledgerApiProtos().service("com.daml.ledger.api.v2.VersionService"), {
    GetLedgerApiVersion: (_call: unknown, callback: grpc.sendUnaryData<object>) =>
      callback(null, { version: "3.5.0" }),
  });
  const credentials = grpc.ServerCredentials.createSsl(
    readFileSync(files.ca),
    [{ private_key: readFileSync(files.serverKey), cert_chain: readFileSync(files.serverCert) }],
    mutual,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { port, server };
}

async function version(tls: LedgerClientOptions["tls"], port: number): Promise<string> {
  const client = new LedgerClient({
    target: `127.0.0.1:${port}`,
    deadlineMs: 10_000,
    ...(tls ? { tls } : {}),
  });
  try {
    return (await client.unary<{ version: string }>("VersionService", "GetLedgerApiVersion", {}, undefined))
      .version;
  } finally {
    client.close();
  }
}

async function unavailable(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return false;
  } catch (error) {
    return isGrpcError(error) && error.code === grpc.status.UNAVAILABLE;
  }
}

describe("LedgerClient.unary over TLS (ledger.tls)", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-tls-"));
  let files: ReturnType<typeof makeCertificates>;
  let tls: { port: number; server: grpc.Server };
  let mtls: { port: number; server: grpc.Server };
  before(async () => {
    files = makeCertificates(dir);
    tls = await startTlsLedger(files, false);
    mtls = await startTlsLedger(files, true);
  });
  after(() => {
    tls.server.forceShutdown();
    mtls.server.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers over TLS with the ledger's CA", async () => {
    strictEqual(await version({ caCert: files.ca }, tls.port), "3.5.0");
  });

  it("refuses a ledger whose certificate no trusted CA signed (UNAVAILABLE)", async () => {
    ok(await unavailable(version({}, tls.port)));
  });

  it("answers over mutual TLS with the client certificate, and is refused without it", async () => {
    const mutual = { caCert: files.ca, clientCert: files.clientCert, clientKey: files.clientKey };
    strictEqual(await version(mutual, mtls.port), "3.5.0");
    ok(await unavailable(version({ caCert: files.ca }, mtls.port)));
  });

  it("probes readiness over the same TLS session", async () => {
    const client = new LedgerClient({
      target: `127.0.0.1:${tls.port}`,
      deadlineMs: 10_000,
      tls: { caCert: files.ca },
    });
    try {
      // This ledger has no health service: UNIMPLEMENTED is an answer all the same.
      ok(await client.isReady(5_000));
    } finally {
      client.close();
    }
  });
});
