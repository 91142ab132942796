import assert from "node:assert/strict";
import type { ServerHttp2Stream } from "node:http2";
import { after, before, beforeEach, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { Observable, Subscription } from "rxjs";
import { CantonHttpError } from "../../src/errors/index.js";
import { frameMessage } from "../../src/ledger/grpc-frame.js";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { LedgerStreamBudget, ledgerStreamBudgetBuffer } from "../../src/limits/ledger-stream-budget.js";
import { until } from "../support/until.js";
import { answerOk, answerTrailersOnly, OK_HEADERS, startWireLedger, type WireLedger } from "./wire-ledger.js";

/** How a stream ended: "ok", its error, or nothing yet. */
function watch(stream: Observable<Buffer>): { subscription: Subscription; end: Promise<"ok" | unknown> } {
  let subscription: Subscription | undefined;
  const end = new Promise<"ok" | unknown>((resolve) => {
    subscription = stream.subscribe({ error: resolve, complete: () => resolve("ok") });
  });
  return { subscription: subscription as Subscription, end };
}

/** Answers the headers and one message, then holds the stream open. */
const holdOpen = (stream: ServerHttp2Stream) => {
  stream.respond(OK_HEADERS);
  stream.write(frameMessage(Buffer.from("1"), 1024) as Buffer);
};

describe("LedgerClient.serverStream under a stream budget (limits.ledger-streams), on a wire-level ledger", () => {
  let ledger: WireLedger;
  let client: LedgerClient;
  let budget: LedgerStreamBudget;
  const updates = () =>
    client.serverStream<Buffer>("UpdateService", "GetUpdates", {}, "token", { rawResponses: true });
  const probe = () =>
    client.serverStream<Buffer>("UpdateService", "GetUpdates", {}, "token", {
      rawResponses: true,
      purpose: "authorization",
    });

  before(async () => {
    ledger = await startWireLedger();
  });
  beforeEach(() => {
    client?.close();
    // Subscriptions may hold 1 of the 2: the other is kept for authorization calls.
    budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      limit: 2,
      reservedForAuthorization: 1,
      queueLimit: 1,
      queueTimeoutMs: 600_000,
    });
    client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 10_000,
      streamSlots: budget,
    });
    ledger.answer = holdOpen;
  });
  after(() => {
    client.close();
    ledger.close();
  });

  it("gives the slot back when the call completes, and when it fails with a status", async () => {
    ledger.answer = (stream) => answerOk(stream);
    assert.equal(await watch(updates()).end, "ok");
    assert.equal(budget.held(), 0);
    ledger.answer = answerTrailersOnly({ "grpc-status": String(grpc.status.PERMISSION_DENIED) });
    const failed = (await watch(updates()).end) as grpc.ServiceError;
    assert.equal(failed.code, grpc.status.PERMISSION_DENIED);
    assert.equal(budget.held(), 0);
  });

  it("opens a waiter's call only once the slot is free, and gives it back when the subscriber leaves", async () => {
    const calls = ledger.streams.length;
    const first = watch(updates());
    await until(() => ledger.streams.length === calls + 1);
    const second = watch(updates());
    assert.equal(budget.queueLength(), 1);
    assert.equal(ledger.streams.length, calls + 1, "no call for the waiter");

    first.subscription.unsubscribe();
    assert.equal(await ledger.streams[calls]?.closed, http2CancelCode, "the first call was cancelled");
    await until(() => ledger.streams.length === calls + 2);
    assert.equal(budget.held(), 1);
    second.subscription.unsubscribe();
    assert.equal(budget.held(), 0);
  });

  it("opens an authorization call at once in the reserve while subscriptions fill their share and one waits", async () => {
    const calls = ledger.streams.length;
    const subscription = watch(updates());
    await until(() => ledger.streams.length === calls + 1);
    const waiter = watch(updates());
    assert.equal(budget.queueLength("subscription"), 1);

    const authorization = watch(probe());
    await until(() => ledger.streams.length === calls + 2);
    assert.equal(budget.held("authorization"), 1);
    assert.equal(budget.held("subscription"), 1);
    assert.equal(
      budget.queueLength("subscription"),
      1,
      "the subscription still waits: the reserve is not its",
    );

    // The probe's slot goes back to the reserve: the waiting subscription may not take it.
    authorization.subscription.unsubscribe();
    assert.equal(budget.held(), 1);
    assert.equal(budget.queueLength("subscription"), 1);
    assert.equal(ledger.streams.length, calls + 2);
    subscription.subscription.unsubscribe();
    await until(() => ledger.streams.length === calls + 3);
    waiter.subscription.unsubscribe();
    assert.equal(budget.held(), 0);
  });

  it("makes no call for a waiter that leaves the queue", async () => {
    const calls = ledger.streams.length;
    const first = watch(updates());
    await until(() => ledger.streams.length === calls + 1);
    const waiter = watch(updates());
    waiter.subscription.unsubscribe();
    assert.equal(budget.waiting(), 0);
    first.subscription.unsubscribe();
    assert.equal(budget.held(), 0);
    assert.equal(ledger.streams.length, calls + 1);
  });

  it("gives the slot back when the ledger is lost, and a new call takes it", async () => {
    const calls = ledger.streams.length;
    const held = watch(updates());
    await until(() => ledger.streams.length === calls + 1);
    ledger.dropConnections();
    const lost = (await held.end) as grpc.ServiceError;
    assert.equal(lost.code, grpc.status.UNAVAILABLE);
    assert.equal(budget.held(), 0);
    const again = watch(updates());
    await until(() => ledger.streams.length === calls + 2);
    again.subscription.unsubscribe();
  });

  it("errors a subscription past the queue with MAXIMUM_NUMBER_OF_STREAMS (429), making no call", async () => {
    const calls = ledger.streams.length;
    const first = watch(updates());
    await until(() => ledger.streams.length === calls + 1);
    const waiter = watch(updates());
    const refused = await watch(updates()).end;
    assert.ok(refused instanceof CantonHttpError);
    assert.equal(refused.httpStatus, 429);
    assert.equal(refused.body.code, "MAXIMUM_NUMBER_OF_STREAMS");
    assert.deepEqual(refused.body.context, {
      limit: "limits.ledger-streams",
      value: "2",
      reason: "queue-full",
    });
    assert.equal(ledger.streams.length, calls + 1);
    waiter.subscription.unsubscribe();
    first.subscription.unsubscribe();
  });
});

/** NGHTTP2_CANCEL: the client's RST_STREAM for a cancelled call. */
const http2CancelCode = 8;
