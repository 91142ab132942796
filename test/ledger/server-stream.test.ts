import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { BehaviorSubject, type Observable, take } from "rxjs";
import { observeCall } from "../../src/ledger/server-stream.js";
import type { ServerStreamCall } from "../../src/ledger/server-stream-call.js";
import { decodeStatusDetails } from "../../src/proto/status-details.js";
import {
  type CounterServer,
  type CountRequest,
  type ServerCall,
  startCounterServer,
  type Tick,
} from "../fixtures/counter-server.js";

/*
 * The Observable over the gateway's own calls (ServerStreamCall on the lean channel), against a
 * grpc-js server that honours flow control: the code every stream endpoint runs, end to end.
 */

let counter: CounterServer;

function open(request: Partial<CountRequest>): () => ServerStreamCall<Tick> {
  const full: CountRequest = {
    count: 0,
    payload_bytes: 0,
    fail_after: 0,
    fail_code: 0,
    interval_ms: 0,
    rich_error: false,
    ...request,
  };
  return () => counter.open(full);
}

/** Polls a condition (not a timing assertion): fails only if it is still false after `bound` ms. */
async function waitFor(what: string, condition: () => boolean, bound = 10_000): Promise<void> {
  const deadline = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until the server has been blocked on 'drain' with an unchanged count for several polls. */
async function waitUntilHeldBack(call: () => ServerCall | undefined): Promise<number> {
  let last = -1;
  let stable = 0;
  await waitFor("server held back by flow control", () => {
    const c = call();
    if (c === undefined || !c.blocked) return false;
    stable = c.written === last ? stable + 1 : 0;
    last = c.written;
    return stable >= 10;
  });
  return last;
}

interface Collected<T> {
  values: T[];
  done: Promise<"completed">;
}

function collect<T>(source: Observable<T>, onValue?: (values: T[]) => void): Collected<T> {
  const values: T[] = [];
  const done = new Promise<"completed">((resolve, reject) => {
    source.subscribe({
      next: (v) => {
        values.push(v);
        onValue?.(values);
      },
      error: reject,
      complete: () => resolve("completed"),
    });
  });
  return { values, done };
}

function seqs(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

const lastCall = (): ServerCall | undefined => counter.calls.at(-1);

describe("observeCall over the lean channel", () => {
  before(async () => {
    counter = await startCounterServer();
  });

  after(() => counter.stop());

  beforeEach(() => {
    counter.calls.length = 0;
  });

  it("emits every message in order and completes on an OK status", async () => {
    const { values, done } = collect(observeCall(open({ count: 5 })));
    strictEqual(await done, "completed");
    deepStrictEqual(
      values.map((t) => t.seq),
      seqs(5),
    );
  });

  it("opens one call per subscription (cold)", async () => {
    const source = observeCall(open({ count: 3 }));
    const a = collect(source);
    const b = collect(source);
    await Promise.all([a.done, b.done]);
    deepStrictEqual([counter.calls.length, a.values.length, b.values.length], [2, 3, 3]);
  });

  it("pausing stops the server within the HTTP/2 window, and resuming delivers all N in order", async (t) => {
    const n = 2000;
    const k = 10;
    const demand = new BehaviorSubject(true);
    const { values, done } = collect(observeCall(open({ count: n, payload_bytes: 1024 }), demand), (v) => {
      if (v.length === k) demand.next(false);
    });
    const writtenWhilePaused = await waitUntilHeldBack(lastCall);
    const receivedWhilePaused = values.length;
    t.diagnostic(
      `1 KiB messages: paused after ${k}; server wrote ${writtenWhilePaused} of ${n} ` +
        `(${writtenWhilePaused - k} in flight) and blocked; client received ${receivedWhilePaused}`,
    );
    ok(writtenWhilePaused < n, `server wrote ${writtenWhilePaused} of ${n} while paused`);
    // Nothing may slip past a pause: what arrives meanwhile waits in the call.
    strictEqual(receivedWhilePaused, k);

    demand.next(true);
    strictEqual(await done, "completed");
    deepStrictEqual(
      values.map((v) => v.seq),
      seqs(n),
    );
    strictEqual(lastCall()?.written, n);
  });

  it("a demand of false before the first message holds everything until true", async () => {
    const demand = new BehaviorSubject(false);
    const { values, done } = collect(observeCall(open({ count: 5 }), demand));
    // Five small messages fit in the window: the server finishes while the client is paused.
    await waitFor("server finished", () => lastCall()?.finished === true);
    strictEqual(values.length, 0);
    demand.next(true);
    strictEqual(await done, "completed");
    deepStrictEqual(
      values.map((v) => v.seq),
      seqs(5),
    );
  });

  it("an error status that arrives while paused comes after the messages sent before it", async () => {
    const demand = new BehaviorSubject(false);
    const { values, done } = collect(
      observeCall(open({ fail_after: 4, fail_code: grpc.status.ABORTED }), demand),
    );
    await waitFor("server failed the call", () => lastCall()?.finished === true);
    demand.next(true);
    const err = await done.then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    deepStrictEqual(
      { code: err?.code, seqs: values.map((v) => v.seq) },
      { code: grpc.status.ABORTED, seqs: seqs(4) },
    );
  });

  it("surfaces a server error as the ServiceError with code, details and metadata", async () => {
    const { values, done } = collect(
      observeCall(open({ fail_after: 3, fail_code: grpc.status.FAILED_PRECONDITION, rich_error: true })),
    );
    const err = await done.then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    ok(err !== undefined, "stream must error");
    deepStrictEqual(
      {
        code: err.code,
        details: err.details,
        reason: decodeStatusDetails(err.metadata)?.errorInfos[0]?.reason,
        seqs: values.map((v) => v.seq),
      },
      {
        code: grpc.status.FAILED_PRECONDITION,
        details: "TEST_STREAM_FAILED(9,abc123): the test stream failed after some elements",
        reason: "TEST_STREAM_FAILED",
        seqs: seqs(3),
      },
    );
  });

  it("surfaces a CANCELLED status that the server chose", async () => {
    const { done } = collect(observeCall(open({ fail_after: 1, fail_code: grpc.status.CANCELLED })));
    const err = await done.then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    strictEqual(err?.code, grpc.status.CANCELLED);
  });

  it("unsubscribing cancels the server side and surfaces no error", async () => {
    const { values, done } = collect(observeCall(open({ payload_bytes: 1024 })).pipe(take(5)));
    strictEqual(await done, "completed");
    await waitFor("server saw 'cancelled'", () => lastCall()?.cancelled === true);
    deepStrictEqual(
      values.map((v) => v.seq),
      seqs(5),
    );
  });

  it("unsubscribing while paused cancels the server side", async () => {
    const demand = new BehaviorSubject(false);
    const errors: unknown[] = [];
    const subscription = observeCall(open({ payload_bytes: 1024 }), demand).subscribe({
      error: (e: unknown) => errors.push(e),
    });
    const written = await waitUntilHeldBack(lastCall);
    subscription.unsubscribe();
    await waitFor("server saw 'cancelled'", () => lastCall()?.cancelled === true);
    // Let the CANCELLED status of our own cancel() reach the client before checking it was swallowed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    deepStrictEqual({ errors, wroteSomething: written > 0 }, { errors: [], wroteSomething: true });
  });

  it("an erroring demand signal errors the stream and cancels the call", async () => {
    const demand = new BehaviorSubject(true);
    const { done } = collect(observeCall(open({ payload_bytes: 1024 }), demand), (v) => {
      if (v.length === 3) demand.error(new Error("socket lost"));
    });
    const err = await done.then(
      () => undefined,
      (e: Error) => e,
    );
    strictEqual(err?.message, "socket lost");
    await waitFor("server saw 'cancelled'", () => lastCall()?.cancelled === true);
  });
});
