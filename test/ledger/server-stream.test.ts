import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { dirname, join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { BehaviorSubject, type Observable, take } from "rxjs";
import { serverStream } from "../../src/ledger/server-stream.js";

interface CountRequest {
  count: number;
  payload_bytes: number;
  fail_after: number;
  fail_code: number;
}
interface Tick {
  seq: number;
  payload: Buffer;
}

/** What the server did on one call, read by the tests through polling. */
interface ServerCall {
  written: number;
  /** write() returned false and 'drain' has not come yet: the server is held back. */
  blocked: boolean;
  cancelled: boolean;
  finished: boolean;
}

const protoPath = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/stream-test.proto");
const definition = protoLoader.loadSync(protoPath, { keepCase: true, defaults: true });
const counterService = definition["streamtest.Counter"] as grpc.ServiceDefinition;
const countMethod = counterService.Count as grpc.MethodDefinition<CountRequest, Tick>;

const calls: ServerCall[] = [];

/** Streams as fast as the transport allows, but honours write()'s return value and 'drain'. */
function count(call: grpc.ServerWritableStream<CountRequest, Tick>): void {
  const req = call.request;
  const state: ServerCall = { written: 0, blocked: false, cancelled: false, finished: false };
  calls.push(state);
  call.on("cancelled", () => {
    state.cancelled = true;
  });
  const payload = Buffer.alloc(req.payload_bytes, 0x78);
  const pump = (): void => {
    state.blocked = false;
    while (!state.cancelled) {
      if (req.fail_after > 0 && state.written === req.fail_after) {
        const metadata = new grpc.Metadata();
        metadata.set("x-test-trace", "kept");
        state.finished = true;
        call.emit("error", { code: req.fail_code, details: "boom", metadata });
        return;
      }
      if (req.count > 0 && state.written === req.count) {
        state.finished = true;
        call.end();
        return;
      }
      const more = call.write({ seq: state.written, payload });
      state.written += 1;
      if (!more) {
        state.blocked = true;
        call.once("drain", pump);
        return;
      }
    }
  };
  pump();
}

let server: grpc.Server;
let client: grpc.Client;

function open(request: Partial<CountRequest>): () => grpc.ClientReadableStream<Tick> {
  const full: CountRequest = { count: 0, payload_bytes: 0, fail_after: 0, fail_code: 0, ...request };
  return () =>
    client.makeServerStreamRequest(
      countMethod.path,
      countMethod.requestSerialize,
      countMethod.responseDeserialize,
      full,
    );
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

const lastCall = (): ServerCall | undefined => calls.at(-1);

describe("serverStream", () => {
  before(async () => {
    server = new grpc.Server();
    server.addService(counterService, { Count: count });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });

  after(() => {
    client.close();
    server.forceShutdown();
  });

  beforeEach(() => {
    calls.length = 0;
  });

  it("emits every message in order and completes on an OK status", async () => {
    const { values, done } = collect(serverStream(open({ count: 5 })));
    strictEqual(await done, "completed");
    deepStrictEqual(
      values.map((t) => t.seq),
      seqs(5),
    );
  });

  it("opens one call per subscription (cold)", async () => {
    const source = serverStream(open({ count: 3 }));
    const a = collect(source);
    const b = collect(source);
    await Promise.all([a.done, b.done]);
    deepStrictEqual([calls.length, a.values.length, b.values.length], [2, 3, 3]);
  });

  it("pausing stops the server within the HTTP/2 window, and resuming delivers all N in order", async (t) => {
    const n = 2000;
    const k = 10;
    const demand = new BehaviorSubject(true);
    const { values, done } = collect(serverStream(open({ count: n, payload_bytes: 1024 }), demand), (v) => {
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
    const { values, done } = collect(serverStream(open({ count: 5 }), demand));
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
      serverStream(open({ fail_after: 4, fail_code: grpc.status.ABORTED }), demand),
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
      serverStream(open({ fail_after: 3, fail_code: grpc.status.FAILED_PRECONDITION })),
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
        trace: err.metadata.get("x-test-trace"),
        seqs: values.map((v) => v.seq),
      },
      { code: grpc.status.FAILED_PRECONDITION, details: "boom", trace: ["kept"], seqs: seqs(3) },
    );
  });

  it("surfaces a CANCELLED status that the server chose", async () => {
    const { done } = collect(serverStream(open({ fail_after: 1, fail_code: grpc.status.CANCELLED })));
    const err = await done.then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    strictEqual(err?.code, grpc.status.CANCELLED);
  });

  it("unsubscribing cancels the server side and surfaces no error", async () => {
    const { values, done } = collect(serverStream(open({ payload_bytes: 1024 })).pipe(take(5)));
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
    const subscription = serverStream(open({ payload_bytes: 1024 }), demand).subscribe({
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
    const { done } = collect(serverStream(open({ payload_bytes: 1024 }), demand), (v) => {
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
