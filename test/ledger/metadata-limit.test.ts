import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { Observable } from "rxjs";
import { errorAnswer } from "../../src/errors/error-mapping.js";
import { frameMessage } from "../../src/ledger/grpc-frame.js";
import type { RefusedCallReason } from "../../src/ledger/http2-connection.js";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { answerOk, OK_HEADERS, startWireLedger, type WireLedger } from "./wire-ledger.js";

/** What the ledger below announces in SETTINGS_MAX_HEADER_LIST_SIZE, under the 8 KiB default. */
const LEDGER_LIMIT = 4096;

/** The header block as the server received it, counted as HPACK does: name + value + 32 per field. */
function hpackBytes(headers: IncomingHttpHeaders): number {
  return Object.entries(headers).reduce(
    (sum, [name, value]) => sum + name.length + Buffer.byteLength(String(value)) + 32,
    0,
  );
}

/** How a stream ended, with the raw messages it delivered. */
function ending(stream: Observable<Buffer>): {
  messages: Buffer[];
  end: Promise<"ok" | grpc.ServiceError>;
} {
  const messages: Buffer[] = [];
  const end = new Promise<"ok" | grpc.ServiceError>((resolve) => {
    stream.subscribe({
      next: (message) => messages.push(message),
      error: resolve,
      complete: () => resolve("ok"),
    });
  });
  return { messages, end };
}

async function waitFor(what: string, condition: () => boolean, bound = 10_000): Promise<void> {
  const deadline = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("LedgerClient refuses calls whose headers exceed the ledger's limit, without sending them", () => {
  let ledger: WireLedger;
  let client: LedgerClient;
  const refused: RefusedCallReason[] = [];
  const updates = (token: string) =>
    client.serverStream<Buffer>("UpdateService", "GetUpdates", {}, token, { rawResponses: true });

  before(async () => {
    ledger = await startWireLedger({ maxHeaderListSize: LEDGER_LIMIT });
    ledger.answer = (stream) => answerOk(stream, Buffer.from(frameMessage(Buffer.from("1"), 1024) as Buffer));
    client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      onCallRefused: (reason) => refused.push(reason),
    });
  });
  after(() => {
    client.close();
    ledger.close();
  });

  it("refuses a call on a new connection before the ledger's SETTINGS came: it waits for them", async () => {
    // The first call of all: sent at once, it would beat the SETTINGS that announce the limit.
    const { end } = ending(updates("t".repeat(LEDGER_LIMIT)));
    const failure = await end;
    ok(failure !== "ok", "the call failed");
    strictEqual(failure.code, grpc.status.RESOURCE_EXHAUSTED, failure.details);
    strictEqual(ledger.streams.length, 0, "the ledger saw no call");
    deepStrictEqual(refused, ["metadata_too_large"]);
  });

  it("sends a call whose header block is exactly the limit the ledger announced, and refuses one a byte over", async () => {
    const { end } = ending(updates("t"));
    strictEqual(await end, "ok");
    const small = hpackBytes(ledger.streams.at(-1)!.headers);
    const atLimit = "t".repeat(1 + LEDGER_LIMIT - small);

    const sent = ending(updates(atLimit));
    strictEqual(await sent.end, "ok", "the call at the limit went through");
    strictEqual(hpackBytes(ledger.streams.at(-1)!.headers), LEDGER_LIMIT, "as the ledger counts it");

    const streams = ledger.streams.length;
    refused.length = 0;
    const over = await ending(updates(`${atLimit}t`)).end;
    ok(over !== "ok", "the call a byte over failed");
    strictEqual(over.code, grpc.status.RESOURCE_EXHAUSTED);
    strictEqual(
      over.details,
      `Request metadata too large: the call's headers, the token included, take ${LEDGER_LIMIT + 1} bytes as HPACK counts them, over the ledger's limit of ${LEDGER_LIMIT} bytes (the ledger's SETTINGS_MAX_HEADER_LIST_SIZE)`,
    );
    strictEqual(ledger.streams.length, streams, "the ledger saw no call");
    deepStrictEqual(refused, ["metadata_too_large"]);
    const answer = errorAnswer(over);
    strictEqual(answer.status, 431);
    ok(answer.kind === "json" && answer.body.code === "REQUEST_HEADERS_TOO_LARGE", JSON.stringify(answer));
  });

  it("leaves a stream open on the same connection untouched, and later calls on it", async () => {
    let held: ServerHttp2Stream | undefined;
    ledger.answer = (stream) => {
      held = stream;
      stream.respond(OK_HEADERS, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    };
    const open = ending(updates("t"));
    await waitFor("the open stream at the ledger", () => held !== undefined);
    const connections = ledger.connections;
    const streams = ledger.streams.length;

    const unary = client.unary("StateService", "GetLedgerEnd", {}, "u".repeat(16 * 1024));
    const error = await unary.then(
      () => undefined,
      (failure: grpc.ServiceError) => failure,
    );
    strictEqual(error?.code, grpc.status.RESOURCE_EXHAUSTED, error?.details);
    ok(error?.details.endsWith("(the ledger's SETTINGS_MAX_HEADER_LIST_SIZE)"), error?.details);
    strictEqual(ledger.streams.length, streams, "the ledger saw no call");

    held?.end(frameMessage(Buffer.from("after"), 1024) as Buffer);
    strictEqual(await open.end, "ok", "the open stream ended as the ledger ended it");
    deepStrictEqual(open.messages, [Buffer.from("after")]);
    ledger.answer = (stream) => answerOk(stream);
    deepStrictEqual({ ...(await client.unary("StateService", "GetLedgerEnd", {}, "t")) }, { offset: "5" });
    strictEqual(ledger.connections, connections, "one connection throughout");
  });
});

describe("LedgerClient keeps to ledger.max-metadata-bytes when it is below the ledger's limit", () => {
  it("refuses past the configured limit, naming it", async () => {
    const ledger = await startWireLedger();
    const client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      maxMetadataBytes: 600,
    });
    try {
      deepStrictEqual(
        { ...(await client.unary("StateService", "GetLedgerEnd", {}, "t".repeat(100))) },
        { offset: "5" },
      );
      const error = await client.unary("StateService", "GetLedgerEnd", {}, "t".repeat(600)).then(
        () => undefined,
        (failure: grpc.ServiceError) => failure,
      );
      ok(
        error?.details.endsWith("over the ledger's limit of 600 bytes (ledger.max-metadata-bytes)"),
        error?.details,
      );
      strictEqual(ledger.streams.length, 1, "the ledger saw the first call only");
    } finally {
      client.close();
      ledger.close();
    }
  });
});
