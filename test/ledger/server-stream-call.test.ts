import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import http2, { type ServerHttp2Stream } from "node:http2";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { BehaviorSubject, type Observable, take } from "rxjs";
import { jsCantonErrorOfGrpc } from "../../src/errors/error-mapping.js";
import type { CallEnd, CallStart } from "../../src/ledger/call-observer.js";
import { frameMessage } from "../../src/ledger/grpc-frame.js";
import { FLOW_CONTROL_WINDOW_BYTES, LedgerClient } from "../../src/ledger/ledger-client.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import {
  decodeStatusDetails,
  encodeStatusDetails,
  STATUS_DETAILS_KEY,
} from "../../src/proto/status-details.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, token } from "../sandbox/sandbox-client.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";
import { OK_HEADERS, startWireLedger, type WireLedger } from "./wire-ledger.js";

const API = "com.daml.ledger.api.v2";
const UPDATES_PATH = `/${API}.UpdateService/GetUpdates`;
const MAX = 64 * 1024 * 1024;
/** The HTTP/2 window per stream the client announces. */
const WINDOW_BYTES = FLOW_CONTROL_WINDOW_BYTES;

const frame = (message: Buffer) => frameMessage(message, MAX) as Buffer;
const bodyOf = (messages: Buffer[]) => Buffer.concat(messages.map(frame));

interface Collected<T> {
  values: T[];
  /** Resolves "completed", or with the error the stream ended with. */
  end: Promise<"completed" | grpc.ServiceError>;
}

function collect<T>(source: Observable<T>, onValue?: (values: T[]) => void): Collected<T> {
  const values: T[] = [];
  const end = new Promise<"completed" | grpc.ServiceError>((resolve) => {
    source.subscribe({
      next: (value) => {
        values.push(value);
        onValue?.(values);
      },
      error: resolve,
      complete: () => resolve("completed"),
    });
  });
  return { values, end };
}

/** Polls a condition (not a timing assertion): fails only if it is still false after `bound` ms. */
async function waitFor(what: string, condition: () => boolean, bound = 10_000): Promise<void> {
  const deadline = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const error = (end: "completed" | grpc.ServiceError): grpc.ServiceError => {
  ok(end !== "completed", "the stream must fail");
  return end;
};

/** Writes `body` in the pieces `cuts` make, each handed over before the next: separate DATA frames. */
async function writeInPieces(stream: ServerHttp2Stream, body: Buffer, cuts: number[]): Promise<void> {
  let from = 0;
  for (const to of [...cuts, body.length]) {
    await new Promise((resolve) => stream.write(body.subarray(from, to), resolve));
    await new Promise((resolve) => setImmediate(resolve));
    from = to;
  }
}

/** Answers headers, `body` in `cuts` pieces, then `trailers`. */
const answerStream =
  (body: Buffer, cuts: number[], trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" }) =>
  (stream: ServerHttp2Stream) => {
    stream.respond(OK_HEADERS, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers(trailers));
    void writeInPieces(stream, body, cuts).then(() => stream.end());
  };

/** Answers headers and `body`, and leaves the stream open. */
const answerOpen = (body: Buffer) => (stream: ServerHttp2Stream) => {
  stream.respond(OK_HEADERS);
  stream.write(body);
};

describe("LedgerClient.serverStream over the lean HTTP/2 channel, against a wire-level gRPC server", () => {
  let ledger: WireLedger;
  let client: LedgerClient;
  const outcomes: (CallStart & CallEnd)[] = [];
  const updates = (source = client, token?: string) =>
    source.serverStream<Buffer>("UpdateService", "GetUpdates", {}, token, { rawResponses: true });

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

  it("hands over each message's bytes in order, whether split across DATA frames or several in one", async () => {
    const messages = [
      Buffer.alloc(0),
      Buffer.from("a"),
      Buffer.alloc(40_000, 7),
      Buffer.from("xyz"),
      Buffer.alloc(20_000, 9),
    ];
    const body = bodyOf(messages);
    // Inside the first prefix, inside a message, two messages and a half in one piece, ...
    ledger.answer = answerStream(body, [2, 8, 30, 20_000, 40_020, 40_021, 40_030]);
    outcomes.length = 0;
    const { values, end } = collect(updates(client, "secret-token"));
    strictEqual(await end, "completed");
    deepStrictEqual(values, messages);
    const { headers } = ledger.streams.at(-1)!;
    strictEqual(headers[":path"], UPDATES_PATH);
    strictEqual(headers["content-type"], "application/grpc");
    strictEqual(headers.te, "trailers");
    strictEqual(headers.authorization, "Bearer secret-token");
    // Streams have no deadline: they last as long as their consumer wants them.
    strictEqual(headers["grpc-timeout"], undefined);
    deepStrictEqual(
      outcomes.map(({ service, method, streaming, code, receivedBytes }) => ({
        service,
        method,
        streaming,
        code,
        receivedBytes,
      })),
      [
        {
          service: "UpdateService",
          method: "GetUpdates",
          streaming: true,
          code: "OK",
          receivedBytes: 60_004,
        },
      ],
    );
  });

  it("goes over the connection of the unary calls", async () => {
    const shared = await startWireLedger();
    const sharing = new LedgerClient({ target: `127.0.0.1:${shared.port}`, deadlineMs: 10_000 });
    try {
      await sharing.unary("StateService", "GetLedgerEnd", {}, undefined);
      shared.answer = answerStream(bodyOf([Buffer.from("m")]), []);
      strictEqual(await collect(updates(sharing)).end, "completed");
      strictEqual(shared.connections, 1);
    } finally {
      sharing.close();
      shared.close();
    }
  });

  it("fails with the trailers' rich status after the messages before it, mapped as grpc-js's error", async () => {
    const message = "PARTICIPANT_PRUNED_DATA_ACCESSED(9,abc): Updates are pruned up to 10";
    const details = encodeStatusDetails({
      code: grpc.status.FAILED_PRECONDITION,
      message,
      errorInfos: [
        {
          reason: "PARTICIPANT_PRUNED_DATA_ACCESSED",
          domain: "",
          metadata: { category: "9", earliest_offset: "10" },
        },
      ],
      requestInfos: [{ requestId: "abc", servingData: "" }],
      retryInfos: [],
      resourceInfos: [],
    });
    ledger.answer = answerStream(bodyOf([Buffer.from("1"), Buffer.from("2")]), [6], {
      "grpc-status": String(grpc.status.FAILED_PRECONDITION),
      "grpc-message": message,
      [STATUS_DETAILS_KEY]: details.toString("base64"),
    });
    outcomes.length = 0;
    const { values, end } = collect(updates());
    const failure = error(await end);
    deepStrictEqual(values, [Buffer.from("1"), Buffer.from("2")]);
    strictEqual(failure.code, grpc.status.FAILED_PRECONDITION);
    strictEqual(failure.details, message);
    deepStrictEqual(decodeStatusDetails(failure.metadata)?.errorInfos[0]?.metadata, {
      category: "9",
      earliest_offset: "10",
    });
    strictEqual(jsCantonErrorOfGrpc(failure).code, "PARTICIPANT_PRUNED_DATA_ACCESSED");
    strictEqual(outcomes.at(-1)?.code, "FAILED_PRECONDITION");
  });

  it("fails with a trailers-only status", async () => {
    ledger.answer = (stream) =>
      stream.respond(
        { ...OK_HEADERS, "grpc-status": String(grpc.status.PERMISSION_DENIED), "grpc-message": "no" },
        { endStream: true },
      );
    const { values, end } = collect(updates());
    const failure = error(await end);
    deepStrictEqual([failure.code, failure.details, values.length], [grpc.status.PERMISSION_DENIED, "no", 0]);
  });

  it("fails INTERNAL when an OK status comes in the middle of a message", async () => {
    const body = bodyOf([Buffer.from("whole"), Buffer.from("cut short")]);
    ledger.answer = answerStream(body.subarray(0, body.length - 1), []);
    const { values, end } = collect(updates());
    const failure = error(await end);
    deepStrictEqual([failure.code, failure.details], [grpc.status.INTERNAL, "Received a truncated message"]);
    deepStrictEqual(values, [Buffer.from("whole")]);
  });

  it("fails INTERNAL on a compressed message and cancels the stream at the server", async () => {
    ledger.answer = answerOpen(Buffer.from([1, 0, 0, 0, 1, 7]));
    const failure = error(await collect(updates()).end);
    strictEqual(failure.code, grpc.status.INTERNAL);
    strictEqual(await ledger.streams.at(-1)?.closed, http2.constants.NGHTTP2_CANCEL);
  });

  it("fails UNAVAILABLE after the messages received when the connection drops, and the next stream connects anew", async () => {
    ledger.answer = answerOpen(bodyOf([Buffer.from("1"), Buffer.from("2")]));
    const connections = ledger.connections;
    const { values, end } = collect(updates(), (received) => {
      if (received.length === 2) ledger.dropConnections();
    });
    const failure = error(await end);
    strictEqual(failure.code, grpc.status.UNAVAILABLE, failure.details);
    deepStrictEqual(values, [Buffer.from("1"), Buffer.from("2")]);
    ledger.answer = answerStream(bodyOf([Buffer.from("3")]), []);
    const next = collect(updates());
    strictEqual(await next.end, "completed");
    deepStrictEqual(next.values, [Buffer.from("3")]);
    strictEqual(ledger.connections, connections + 1);
  });

  it("cancels the stream at the server on unsubscribe (RST_STREAM CANCEL), surfacing no error", async () => {
    ledger.answer = answerOpen(bodyOf([Buffer.from("1"), Buffer.from("2")]));
    outcomes.length = 0;
    const { values, end } = collect(updates().pipe(take(1)));
    strictEqual(await end, "completed");
    deepStrictEqual(values, [Buffer.from("1")]);
    strictEqual(await ledger.streams.at(-1)?.closed, http2.constants.NGHTTP2_CANCEL);
    deepStrictEqual(
      outcomes.map((outcome) => outcome.code),
      ["CANCELLED"],
    );
  });

  for (const [status, outcome] of [
    [grpc.status.OK, "completed"],
    [grpc.status.ABORTED, grpc.status.ABORTED],
  ] as const) {
    it(`holds a status (${grpc.status[status]}) read while paused until the messages received before it went out`, async () => {
      // Three messages in one DATA frame: the first pauses the stream, the others wait in the
      // call, and the trailers come after them, while it is paused.
      ledger.answer = (stream) => {
        stream.respond(OK_HEADERS, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(status) }));
        stream.end(bodyOf([Buffer.from("1"), Buffer.from("2"), Buffer.from("3")]));
      };
      outcomes.length = 0;
      const demand = new BehaviorSubject(true);
      const { values, end } = collect(
        client.serverStream<Buffer>("UpdateService", "GetUpdates", {}, undefined, {
          rawResponses: true,
          demand$: demand,
        }),
        (received) => {
          if (received.length === 1) demand.next(false);
        },
      );
      let ended = false;
      void end.then(() => {
        ended = true;
      });
      await waitFor("the call's status read", () => outcomes.length === 1);
      // Let anything the status would wrongly set off come out before looking.
      await new Promise((resolve) => setImmediate(resolve));
      deepStrictEqual({ values, ended }, { values: [Buffer.from("1")], ended: false });
      demand.next(true);
      const ending = await end;
      deepStrictEqual(
        { values, outcome: ending === "completed" ? ending : ending.code },
        { values: [Buffer.from("1"), Buffer.from("2"), Buffer.from("3")], outcome },
      );
    });
  }

  it("tells onDraining when the ledger closes the stream's connection gracefully; the stream goes on", async () => {
    let held: ServerHttp2Stream | undefined;
    ledger.answer = (stream) => {
      held = stream;
      stream.respond(OK_HEADERS, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.write(bodyOf([Buffer.from("before")]), () =>
        stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id),
      );
    };
    const closing: grpc.ServiceError[] = [];
    const { values, end } = collect(
      client.serverStream<Buffer>("UpdateService", "GetUpdates", {}, undefined, {
        rawResponses: true,
        onDraining: (error) => closing.push(error),
      }),
    );
    await waitFor("onDraining told", () => closing.length > 0);
    held?.end(bodyOf([Buffer.from("after")]));
    strictEqual(await end, "completed");
    deepStrictEqual(
      { values, closing: closing.map((error) => error.code) },
      { values: [Buffer.from("before"), Buffer.from("after")], closing: [grpc.status.UNAVAILABLE] },
    );
  });

  it("sends a stream the ledger refused once more", async () => {
    let refused = 0;
    ledger.answer = (stream) => {
      if (refused++ === 0) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else answerStream(bodyOf([Buffer.from("after")]), [])(stream);
    };
    const { values, end } = collect(updates());
    strictEqual(await end, "completed");
    deepStrictEqual([values, refused], [[Buffer.from("after")], 2]);
  });

  it("does not send again a stream refused after its messages began: no message twice", async () => {
    ledger.answer = (stream) => {
      // Waiting for trailers: close() then resets the stream instead of ending it first.
      stream.respond(OK_HEADERS, { waitForTrailers: true });
      stream.write(bodyOf([Buffer.from("1")]), () => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
    };
    const streams = ledger.streams.length;
    const { values, end } = collect(updates());
    const failure = error(await end);
    strictEqual(failure.code, grpc.status.UNAVAILABLE, failure.details);
    deepStrictEqual(values, [Buffer.from("1")]);
    strictEqual(ledger.streams.length, streams + 1);
  });

  it("pings the ledger while a paused stream is open: a paused stream is an open call", async () => {
    const pinging = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      keepalive: { timeMs: 100, timeoutMs: 5_000 },
    });
    ledger.answer = answerOpen(bodyOf([Buffer.from("1")]));
    const demand = new BehaviorSubject(false);
    const subscription = pinging
      .serverStream<Buffer>("UpdateService", "GetUpdates", {}, undefined, {
        rawResponses: true,
        demand$: demand,
      })
      .subscribe();
    try {
      const pings = ledger.pings;
      await waitFor("three pings", () => ledger.pings >= pings + 3);
    } finally {
      subscription.unsubscribe();
      pinging.close();
    }
  });

  it("holds streams past the ledger's SETTINGS_MAX_CONCURRENT_STREAMS until a slot is free, as grpc-js", async () => {
    const narrow = await startWireLedger({ maxConcurrentStreams: 1 });
    const queued = new LedgerClient({ target: `127.0.0.1:${narrow.port}`, deadlineMs: 10_000 });
    try {
      narrow.answer = answerOpen(bodyOf([Buffer.from("first")]));
      const first = updates(queued).subscribe();
      await waitFor("the first stream's headers at the server", () => narrow.streams.length === 1);
      narrow.answer = answerStream(bodyOf([Buffer.from("second")]), []);
      const second = collect(updates(queued));
      // Not a timing assertion: the second stream must not have reached the server meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      strictEqual(narrow.streams.length, 1);
      first.unsubscribe();
      strictEqual(await second.end, "completed");
      deepStrictEqual(second.values, [Buffer.from("second")]);
    } finally {
      queued.close();
      narrow.close();
    }
  });
});

/** What the ledger did on one GetUpdates call, read by the tests through polling. */
interface PumpState {
  written: number;
  /** write() returned false and 'drain' has not come yet: the server is held back. */
  blocked: boolean;
  cancelled: boolean;
}

/** Waits until the server has been blocked on 'drain' with an unchanged count for several polls. */
async function waitUntilHeldBack(state: () => PumpState | undefined): Promise<number> {
  let last = -1;
  let stable = 0;
  await waitFor("server held back by flow control", () => {
    const current = state();
    if (current === undefined || !current.blocked) return false;
    stable = current.written === last ? stable + 1 : 0;
    last = current.written;
    return stable >= 10;
  });
  return last;
}

describe("LedgerClient.serverStream flow control, against a grpc-js ledger that honours backpressure", () => {
  const COUNT = 3000;
  const WORKFLOW_ID = "w".repeat(1000);
  const calls: PumpState[] = [];
  let server: grpc.Server;
  let client: LedgerClient;
  /** The bytes of one update message (all are the same size but for the offset's varint). */
  let messageBytes = 0;

  /** GetUpdates: COUNT transactions of ~1 KiB as fast as write() and 'drain' allow. */
  function pump(call: grpc.ServerWritableStream<object, object>): void {
    const state: PumpState = { written: 0, blocked: false, cancelled: false };
    calls.push(state);
    call.on("cancelled", () => {
      state.cancelled = true;
    });
    const next = (): void => {
      state.blocked = false;
      while (!state.cancelled) {
        if (state.written === COUNT) return void call.end();
        const more = call.write({
          transaction: { workflowId: WORKFLOW_ID, offset: String(1000 + state.written) },
        });
        state.written++;
        if (!more) {
          state.blocked = true;
          call.once("drain", next);
          return;
        }
      }
    };
    next();
  }

  before(async () => {
    const service = ledgerApiProtos().service(`${API}.UpdateService`);
    messageBytes = service.GetUpdates!.responseSerialize({
      transaction: { workflowId: WORKFLOW_ID, offset: "1000" },
    }).length;
    server = new grpc.Server();
    server.addService(service, { GetUpdates: pump });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    client = new LedgerClient({ target: `127.0.0.1:${port}`, deadlineMs: 10_000 });
  });
  after(() => {
    client.close();
    server.forceShutdown();
  });

  it("a paused stream holds the ledger back within its 1 MiB window; resumed, it delivers every message in order", async (t) => {
    const k = 10;
    const demand = new BehaviorSubject(true);
    const { values, end } = collect(
      client.serverStream<{ transaction?: { offset: string } }>(
        "UpdateService",
        "GetUpdates",
        {},
        undefined,
        {
          demand$: demand,
        },
      ),
      (received) => {
        if (received.length === k) demand.next(false);
      },
    );
    const written = await waitUntilHeldBack(() => calls.at(-1));
    const inFlight = (written - k) * messageBytes;
    t.diagnostic(
      `${messageBytes}-byte messages: paused after ${k}; ledger wrote ${written} (${inFlight} bytes past the pause) and blocked`,
    );
    strictEqual(values.length, k, "nothing slips past a pause");
    ok(written < COUNT, `the ledger wrote ${written} of ${COUNT} while paused`);
    // The stream's window, plus the buffers on both sides (16 KiB each, a chunk's rest).
    ok(inFlight <= WINDOW_BYTES + 128 * 1024, `${inFlight} bytes past the pause`);
    // ... and the window is the 1 MiB one, not HTTP/2's default 64 KiB.
    ok(inFlight >= WINDOW_BYTES / 2, `${inFlight} bytes past the pause`);

    demand.next(true);
    strictEqual(await end, "completed");
    deepStrictEqual(
      values.map((value) => Number(value.transaction?.offset) - 1000),
      Array.from({ length: COUNT }, (_, i) => i),
    );
  });

  it("unsubscribing from a paused stream cancels it at the ledger", async () => {
    const demand = new BehaviorSubject(false);
    const subscription = client
      .serverStream("UpdateService", "GetUpdates", {}, undefined, { demand$: demand })
      .subscribe();
    await waitUntilHeldBack(() => calls.at(-1));
    subscription.unsubscribe();
    await waitFor("the ledger saw 'cancelled'", () => calls.at(-1)?.cancelled === true);
  });
});

describe("LedgerClient.serverStream against the sandbox", () => {
  const TICKS = 1500;
  let sandbox: RunningSandbox;
  let client: LedgerClient;
  let grpcJs: grpc.Client;
  let request: object;
  let jwt: string;
  const definition = ledgerApiProtos().service(`${API}.UpdateService`).GetUpdates!;

  /** The same call through grpc-js, as the gateway made it before: the reference. */
  const viaGrpcJs = (raw: boolean) =>
    new Promise<unknown[]>((resolve, reject) => {
      const call = grpcJs.makeServerStreamRequest(
        definition.path,
        definition.requestSerialize,
        raw ? (bytes: Buffer) => bytes : definition.responseDeserialize,
        request,
        bearer(jwt),
      );
      const received: unknown[] = [];
      call.on("data", (message) => received.push(message));
      call.on("error", reject);
      call.on("end", () => resolve(received));
    });

  before(async () => {
    sandbox = await startSandbox({
      port: 0,
      preload: { ticks: TICKS, payloadBytes: 3000, perTransaction: 3 },
    });
    const preloaded = sandbox.preloaded!;
    jwt = token(`actAs-${preloaded.party}`);
    request = {
      beginExclusive: "0",
      endInclusive: String(preloaded.lastOffset),
      updateFormat: {
        includeTransactions: {
          eventFormat: {
            filtersByParty: {
              [preloaded.party]: { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: false } }] },
            },
          },
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    };
    client = new LedgerClient({ target: `127.0.0.1:${sandbox.port}`, deadlineMs: 10_000 });
    grpcJs = new grpc.Client(`127.0.0.1:${sandbox.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    grpcJs.close();
    await sandbox.stop();
  });

  it("reads the update stream to the same bytes and the same decoded messages as grpc-js", async () => {
    const raw = collect(
      client.serverStream<Buffer>("UpdateService", "GetUpdates", request, jwt, { rawResponses: true }),
    );
    strictEqual(await raw.end, "completed");
    strictEqual(raw.values.length, TICKS / 3);
    deepStrictEqual(raw.values, await viaGrpcJs(true));
    const decoded = collect(client.serverStream("UpdateService", "GetUpdates", request, jwt));
    strictEqual(await decoded.end, "completed");
    deepStrictEqual(decoded.values, await viaGrpcJs(false));
  });

  it("a paused stream stops the sandbox within ~1 MiB of what it sent", async (t) => {
    // Counts the bytes the sandbox sends, on their way through a TCP relay.
    let fromSandbox = 0;
    const relay = net.createServer((socket) => {
      const upstream = net.connect(sandbox.port, "127.0.0.1");
      upstream.on("data", (chunk: Buffer) => {
        fromSandbox += chunk.length;
      });
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const relayed = new LedgerClient({
      target: `127.0.0.1:${(relay.address() as AddressInfo).port}`,
      deadlineMs: 10_000,
    });
    try {
      const demand = new BehaviorSubject(true);
      const k = 5;
      let bytesAtPause = 0;
      const { values, end } = collect(
        relayed.serverStream<Buffer>("UpdateService", "GetUpdates", request, jwt, {
          rawResponses: true,
          demand$: demand,
        }),
        (received) => {
          if (received.length === k) {
            bytesAtPause = fromSandbox;
            demand.next(false);
          }
        },
      );
      let last = -1;
      let stable = 0;
      await waitFor("the sandbox stopped sending", () => {
        stable = fromSandbox === last ? stable + 1 : 0;
        last = fromSandbox;
        return stable >= 30;
      });
      t.diagnostic(`the sandbox sent ${fromSandbox - bytesAtPause} bytes after the pause`);
      strictEqual(values.length, k);
      const afterPause = fromSandbox - bytesAtPause;
      ok(afterPause <= WINDOW_BYTES + 128 * 1024, `${afterPause} bytes after the pause`);
      ok(afterPause >= WINDOW_BYTES / 2, `${afterPause} bytes after the pause: the 1 MiB window, not 64 KiB`);
      demand.next(true);
      strictEqual(await end, "completed");
      strictEqual(values.length, TICKS / 3);
    } finally {
      relayed.close();
      relay.close();
    }
  });
});

describe("LedgerClient.serverStream drops the connection of a frozen ledger (keepalive)", () => {
  let sandbox: SandboxProcess;
  let client: LedgerClient;
  before(async () => {
    sandbox = await startSandboxProcess();
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

  it("fails a paused, open-ended stream of the SIGSTOPped sandbox with UNAVAILABLE", async () => {
    const { partyDetails } = await client.unary<{ partyDetails: { party: string } }>(
      "admin.PartyManagementService",
      "AllocateParty",
      { partyIdHint: "frozen" },
      token(),
    );
    const party = partyDetails.party;
    const request = {
      beginExclusive: "0",
      updateFormat: {
        includeTransactions: {
          eventFormat: { filtersByParty: { [party]: { cumulative: [{ wildcardFilter: {} }] } } },
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    };
    const jwt = token(`actAs-${party}`);
    const demand = new BehaviorSubject(false);
    const { end } = collect(
      client.serverStream("UpdateService", "GetUpdates", request, jwt, { demand$: demand }),
    );
    // The stream is open at the ledger once a unary call sent after it on the same connection came back.
    await client.unary("VersionService", "GetLedgerApiVersion", {}, jwt);
    sandbox.child.kill("SIGSTOP");
    try {
      const failure = error(await end);
      strictEqual(failure.code, grpc.status.UNAVAILABLE, failure.details);
    } finally {
      sandbox.child.kill("SIGCONT");
    }
  });
});
