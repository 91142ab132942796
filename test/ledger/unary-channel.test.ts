import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { errorAnswer, isGrpcError } from "../../src/errors/error-mapping.js";
import { isOversizedMessage } from "../../src/errors/http-status.js";
import type { CallEnd, CallStart } from "../../src/ledger/call-observer.js";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import {
  decodeStatusDetails,
  encodeStatusDetails,
  STATUS_DETAILS_KEY,
} from "../../src/proto/status-details.js";
import { answerOk, answerTrailersOnly, OK_HEADERS, startWireLedger, type WireLedger } from "./wire-ledger.js";

const API = "com.daml.ledger.api.v2";
const LEDGER_END_PATH = `/${API}.StateService/GetLedgerEnd`;

async function failure(call: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await call;
  } catch (error) {
    ok(isGrpcError(error), `a grpc-js-shaped error, not ${String(error)}`);
    return error;
  }
  throw new Error("the call succeeded");
}

describe("LedgerClient.unary over the lean HTTP/2 channel, against a wire-level gRPC server", () => {
  let ledger: WireLedger;
  let client: LedgerClient;
  const outcomes: (CallStart & CallEnd)[] = [];
  const ledgerEnd = (token?: string) =>
    client.unary<{ offset: string }>("StateService", "GetLedgerEnd", {}, token);

  before(async () => {
    ledger = await startWireLedger();
    client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      observer: (call) => ({ trace: call.trace, end: (end) => outcomes.push({ ...call, ...end }) }),
    });
  });
  after(() => {
    client.close();
    ledger.close();
  });

  it("sends the token, content type and grpc-timeout, and decodes the answer", async () => {
    ledger.answer = (stream) => answerOk(stream);
    outcomes.length = 0;
    deepStrictEqual({ ...(await ledgerEnd("secret-token")) }, { offset: "5" });
    const { headers } = ledger.streams.at(-1)!;
    strictEqual(headers[":method"], "POST");
    strictEqual(headers[":path"], LEDGER_END_PATH);
    strictEqual(headers["content-type"], "application/grpc");
    strictEqual(headers.te, "trailers");
    strictEqual(headers.authorization, "Bearer secret-token");
    // Never indexed by HPACK (node:http2 does so for authorization): no header table keeps the token.
    deepStrictEqual((headers as { [http2.sensitiveHeaders]?: unknown })[http2.sensitiveHeaders], [
      "authorization",
    ]);
    ok(
      /^\d{1,8}m$/.test(String(headers["grpc-timeout"])) &&
        Number.parseInt(String(headers["grpc-timeout"]), 10) <= 10_000,
    );
    strictEqual(outcomes.length, 1);
    deepStrictEqual(
      { ...outcomes[0], seconds: 0 },
      {
        service: "StateService",
        method: "GetLedgerEnd",
        streaming: false,
        trace: undefined,
        // The framed request (an empty message: the 5-byte prefix) and the answer's message.
        sentBytes: 5,
        code: "OK",
        seconds: 0,
        receivedBytes: 2,
      },
    );
  });

  it("refuses a 100 KB token before sending it (431), without harm to the calls sharing its connection", async () => {
    ledger.answer = (stream) => setTimeout(() => answerOk(stream), 100);
    await ledgerEnd();
    const connections = ledger.connections;
    const streams = ledger.streams.length;
    outcomes.length = 0;
    const token = "e".repeat(100_000);
    const [other, big] = await Promise.allSettled([ledgerEnd(), ledgerEnd(token)]);
    deepStrictEqual(other.status === "fulfilled" && { ...other.value }, { offset: "5" });
    ok(big.status === "rejected", "the 100 KB token's call failed");
    const error = big.reason as grpc.ServiceError;
    strictEqual(error.code, grpc.status.RESOURCE_EXHAUSTED, error.details);
    ok(
      /take 100\d{3} bytes as HPACK counts them, over the ledger's limit of 8192 bytes \(ledger\.max-metadata-bytes\)$/.test(
        error.details,
      ),
      error.details,
    );
    strictEqual(ledger.streams.length, streams + 1, "only the other call reached the ledger");
    const answer = errorAnswer(error);
    strictEqual(answer.status, 431);
    ok(answer.kind === "json" && answer.body.code === "REQUEST_HEADERS_TOO_LARGE", JSON.stringify(answer));
    ok(!answer.body.cause.includes("eeee"), "the token is not in the answer");
    ok(
      outcomes.some((outcome) => outcome.code === "RESOURCE_EXHAUSTED"),
      `the refusal is a call outcome: ${outcomes.map((outcome) => outcome.code)}`,
    );
    deepStrictEqual({ ...(await ledgerEnd()) }, { offset: "5" });
    strictEqual(ledger.connections, connections, "one connection throughout");
  });

  it("sends no authorization without a token", async () => {
    ledger.answer = (stream) => answerOk(stream);
    await ledgerEnd();
    strictEqual(ledger.streams.at(-1)!.headers.authorization, undefined);
  });

  it("hands over the raw message bytes with rawResponse", async () => {
    ledger.answer = (stream) => answerOk(stream);
    const bytes = await client.unary("StateService", "GetLedgerEnd", {}, undefined, { rawResponse: true });
    deepStrictEqual([...bytes], [0x08, 0x05]);
  });

  it("decodes a percent-encoded grpc-message", async () => {
    ledger.answer = answerTrailersOnly({
      "grpc-status": "3",
      "grpc-message": "caf%C3%A9 costs 100%25 %E2%9C%93",
    });
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(error.details, "café costs 100% ✓");
  });

  it("fails with the trailers' status and rich details after response headers (not trailers-only)", async () => {
    const details = encodeStatusDetails({
      code: grpc.status.NOT_FOUND,
      message: "CONTRACT_NOT_FOUND(11,abc): gone",
      errorInfos: [{ reason: "CONTRACT_NOT_FOUND", domain: "", metadata: { category: "11" } }],
      requestInfos: [{ requestId: "abc", servingData: "" }],
      retryInfos: [],
      resourceInfos: [],
    });
    ledger.answer = (stream) =>
      answerOk(stream, Buffer.alloc(0), {
        "grpc-status": "5",
        "grpc-message": "CONTRACT_NOT_FOUND(11,abc): gone",
        [STATUS_DETAILS_KEY]: details.toString("base64"),
        "x-extra": "kept",
      });
    outcomes.length = 0;
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.NOT_FOUND);
    strictEqual(error.details, "CONTRACT_NOT_FOUND(11,abc): gone");
    ok(error.metadata instanceof grpc.Metadata);
    deepStrictEqual(error.metadata.get("x-extra"), ["kept"]);
    deepStrictEqual(error.metadata.get("grpc-status"), []);
    strictEqual(decodeStatusDetails(error.metadata)?.errorInfos[0]?.reason, "CONTRACT_NOT_FOUND");
    strictEqual(outcomes.at(-1)?.code, "NOT_FOUND");
  });

  for (const [httpStatus, code] of [
    [400, grpc.status.INTERNAL],
    [401, grpc.status.UNAUTHENTICATED],
    [403, grpc.status.PERMISSION_DENIED],
    [404, grpc.status.UNIMPLEMENTED],
    [429, grpc.status.UNAVAILABLE],
    [503, grpc.status.UNAVAILABLE],
    [500, grpc.status.UNKNOWN],
  ] as const) {
    it(`maps HTTP ${httpStatus} without a gRPC status to ${grpc.status[code]}`, async () => {
      ledger.answer = (stream) => stream.respond({ ":status": httpStatus }, { endStream: true });
      const error = await failure(ledgerEnd());
      strictEqual(error.code, code);
      strictEqual(error.details, `Received HTTP status code ${httpStatus}`);
    });
  }

  it("maps HTTP 431 (Netty's answer to headers over its limit) to the gateway's 431, not UNKNOWN", async () => {
    ledger.answer = (stream) => stream.respond({ ":status": 431 }, { endStream: true });
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.RESOURCE_EXHAUSTED);
    strictEqual(
      error.details,
      "Request metadata too large: the ledger answered HTTP status 431 (Request Header Fields Too Large)",
    );
    const answer = errorAnswer(error);
    deepStrictEqual(
      answer.kind === "json" && [
        answer.status,
        answer.body.code,
        answer.body.errorCategory,
        answer.body.grpcCodeValue,
      ],
      [431, "REQUEST_HEADERS_TOO_LARGE", 8, grpc.status.INVALID_ARGUMENT],
    );
  });

  it("fails INTERNAL on a compressed message (no compression was offered)", async () => {
    ledger.answer = (stream) => answerOk(stream, Buffer.from([1, 0, 0, 0, 2, 0x08, 0x05]));
    strictEqual((await failure(ledgerEnd())).code, grpc.status.INTERNAL);
  });

  it("fails UNIMPLEMENTED on an OK answer without a message, as grpc-js", async () => {
    ledger.answer = answerTrailersOnly({ "grpc-status": "0" });
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.UNIMPLEMENTED);
    strictEqual(error.details, "No message received");
  });

  it("fails RESOURCE_EXHAUSTED on an answer over 64 MiB without reading it", async () => {
    // The prefix alone announces 64 MiB + 1; the rest never comes.
    ledger.answer = (stream) => {
      stream.respond(OK_HEADERS);
      stream.write(Buffer.from([0, 4, 0, 0, 1]));
    };
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.RESOURCE_EXHAUSTED);
    ok(/Received message larger than max/.test(error.details), error.details);
    strictEqual(await ledger.streams.at(-1)!.closed, http2.constants.NGHTTP2_CANCEL);
  });

  it("refuses a request over 64 MiB with RESOURCE_EXHAUSTED, which the gateway answers 413", async () => {
    const before = ledger.streams.length;
    const error = await failure(
      client.unary(
        "admin.PackageManagementService",
        "UploadDarFile",
        { darFile: Buffer.alloc(64 * 1024 * 1024 + 1) },
        undefined,
      ),
    );
    strictEqual(error.code, grpc.status.RESOURCE_EXHAUSTED);
    ok(isOversizedMessage(error.code, error.details), error.details);
    strictEqual(ledger.streams.length, before, "nothing was sent");
  });

  for (const [rstCode, code] of [
    [http2.constants.NGHTTP2_CANCEL, grpc.status.CANCELLED],
    [http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, grpc.status.RESOURCE_EXHAUSTED],
    [http2.constants.NGHTTP2_REFUSED_STREAM, grpc.status.UNAVAILABLE],
  ] as const) {
    it(`fails ${grpc.status[code]} when the server resets the stream with code ${rstCode}`, async () => {
      ledger.answer = (stream) => setImmediate(() => stream.close(rstCode));
      const streams = ledger.streams.length;
      const error = await failure(ledgerEnd());
      strictEqual(error.code, code, error.details);
      // A refused stream never reached the server's application: it goes once more, only once.
      strictEqual(
        ledger.streams.length - streams,
        rstCode === http2.constants.NGHTTP2_REFUSED_STREAM ? 2 : 1,
      );
    });
  }

  it("fails INTERNAL when the server resets the stream after its response headers", async () => {
    ledger.answer = (stream) => {
      stream.respond(OK_HEADERS);
      setImmediate(() => stream.destroy(new Error("server failure")));
    };
    const error = await failure(ledgerEnd());
    strictEqual(error.code, grpc.status.INTERNAL, error.details);
  });

  it("fails UNAVAILABLE when the connection drops mid-call, and the next call connects anew", async () => {
    ledger.answer = (stream) => {
      stream.respond(OK_HEADERS);
      setImmediate(() => stream.session?.destroy());
    };
    strictEqual((await failure(ledgerEnd())).code, grpc.status.UNAVAILABLE);
    ledger.answer = (stream) => answerOk(stream);
    deepStrictEqual({ ...(await ledgerEnd()) }, { offset: "5" });
  });

  it("lets a call finish on a connection the ledger closes gracefully (GOAWAY), pings due or not", async () => {
    // Pings every 100 ms: several fall due while the call drains on the closed connection.
    const pinging = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      keepalive: { timeMs: 100, timeoutMs: 100 },
    });
    ledger.answer = (stream) => {
      stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
      setTimeout(() => answerOk(stream), 600);
    };
    try {
      deepStrictEqual(
        { ...(await pinging.unary("StateService", "GetLedgerEnd", {}, undefined)) },
        { offset: "5" },
      );
      ledger.answer = (stream) => answerOk(stream);
      const connections = ledger.connections;
      deepStrictEqual(
        { ...(await pinging.unary("StateService", "GetLedgerEnd", {}, undefined)) },
        { offset: "5" },
      );
      strictEqual(ledger.connections, connections + 1, "the next call went on a new connection");
    } finally {
      pinging.close();
    }
  });

  it("cancels a call the server never answers at its deadline: DEADLINE_EXCEEDED", async () => {
    const impatient = new LedgerClient({ target: `127.0.0.1:${ledger.port}`, deadlineMs: 300 });
    ledger.answer = () => {};
    try {
      const error = await failure(impatient.unary("StateService", "GetLedgerEnd", {}, undefined));
      strictEqual(error.code, grpc.status.DEADLINE_EXCEEDED);
      strictEqual(error.details, "Deadline exceeded");
      const stream = ledger.streams.at(-1)!;
      ok(Number.parseInt(String(stream.headers["grpc-timeout"]), 10) <= 300);
      // The client reset the stream: the server stops working on it.
      strictEqual(await stream.closed, http2.constants.NGHTTP2_CANCEL);
    } finally {
      impatient.close();
    }
  });

  it("ends calls in flight on close() with CANCELLED or UNAVAILABLE, and later calls at once", async () => {
    const closing = new LedgerClient({ target: `127.0.0.1:${ledger.port}`, deadlineMs: 30_000 });
    ledger.answer = () => {};
    const call = failure(closing.unary("StateService", "GetLedgerEnd", {}, undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
    closing.close();
    ok([grpc.status.CANCELLED, grpc.status.UNAVAILABLE].includes((await call).code));
    strictEqual(
      (await failure(closing.unary("StateService", "GetLedgerEnd", {}, undefined))).code,
      grpc.status.UNAVAILABLE,
    );
  });
});

/** A grpc-js server of VersionService, on `port` (0: ephemeral). */
async function startVersionLedger(port = 0): Promise<{ port: number; server: grpc.Server }> {
  const server = new grpc.Server();
  server.addService(ledgerApiProtos().service(`${API}.VersionService`), {
    GetLedgerApiVersion: (_call: unknown, callback: grpc.sendUnaryData<object>) =>
      callback(null, { version: "3.5.0" }),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return { port: bound, server };
}

describe("LedgerClient.unary follows the ledger going and coming back", () => {
  const version = (client: LedgerClient) =>
    client.unary<{ version: string }>("VersionService", "GetLedgerApiVersion", {}, undefined);

  it("fails UNAVAILABLE, without waiting for the deadline, while nothing listens", async () => {
    const { port, server } = await startVersionLedger();
    server.forceShutdown();
    const client = new LedgerClient({ target: `127.0.0.1:${port}`, deadlineMs: 60_000 });
    try {
      for (let i = 0; i < 3; i++) strictEqual((await failure(version(client))).code, grpc.status.UNAVAILABLE);
    } finally {
      client.close();
    }
  });

  it("answers again within seconds of a ledger restarted on the same port", async () => {
    let ledger = await startVersionLedger();
    const client = new LedgerClient({ target: `127.0.0.1:${ledger.port}`, deadlineMs: 10_000 });
    try {
      strictEqual((await version(client)).version, "3.5.0");
      ledger.server.forceShutdown();
      // Calls meanwhile fail and grow the reconnection backoff to its 1 s maximum.
      for (let i = 0; i < 10; i++) {
        strictEqual((await failure(version(client))).code, grpc.status.UNAVAILABLE);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      ledger = await startVersionLedger(ledger.port);
      const started = Date.now();
      let answered: string | undefined;
      // The backoff is at most 1 s; 10 s only ends a broken run on a loaded machine.
      while (answered === undefined && Date.now() - started < 10_000) {
        answered = await version(client).then(
          (answer) => answer.version,
          () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100)),
        );
      }
      strictEqual(answered, "3.5.0", "answered within 10 s of the ledger's return");
    } finally {
      client.close();
      ledger.server.forceShutdown();
    }
  });
});

describe("LedgerClient.unary shares one HTTP/2 session between calls", () => {
  it("opens one connection for concurrent calls made while it connects", async () => {
    const ledger = await startWireLedger();
    const client = new LedgerClient({ target: `127.0.0.1:${ledger.port}`, deadlineMs: 10_000 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          client.unary<{ offset: string }>("StateService", "GetLedgerEnd", {}, undefined),
        ),
      );
      ok(answers.every((answer) => answer.offset === "5"));
      strictEqual(ledger.streams.length, 20);
      strictEqual(ledger.connections, 1);
    } finally {
      client.close();
      ledger.close();
    }
  });
});
