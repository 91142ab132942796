import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Metadata, status } from "@grpc/grpc-js";
import { Observable, Subject, type Subscription } from "rxjs";
import { authorizeSubscriber, probeSubscriber } from "../../src/endpoints/stream-authorization.js";
import type { StreamEndpoint } from "../../src/endpoints/stream-endpoint.js";
import { CantonHttpError, errorFrameBody } from "../../src/errors/index.js";
import { signToken } from "../jwt/test-tokens.js";
import { until } from "../support/until.js";

const grpcError = (code: status) =>
  Object.assign(new Error(`code ${code}`), { code, details: `code ${code}`, metadata: new Metadata() });

/** An updates endpoint whose every open() is recorded and answered by `answer`. */
function updatesEndpoint(answer: (request: Record<string, unknown>) => Observable<string>) {
  const opened: Record<string, unknown>[] = [];
  const endpoint: StreamEndpoint = {
    path: "/v2/updates",
    summary: "",
    requestSchema: "GetUpdatesRequest",
    responseSchema: "JsGetUpdatesResponse",
    idleByDefault: () => true,
    offsetOf: (element) => (JSON.parse(element) as { offset: number }).offset,
    open: (request) => {
      opened.push(request as Record<string, unknown>);
      return answer(request as Record<string, unknown>);
    },
    probe: (request) => {
      opened.push(request as Record<string, unknown>);
      return answer(request as Record<string, unknown>);
    },
  };
  return { endpoint, opened };
}

const empty = () => new Observable<string>((s) => s.complete());

/** Collects what a subscriber gets until it ends. */
function collect(source: Observable<string>) {
  const elements: string[] = [];
  let subscription: Subscription | undefined;
  const ended = new Promise<unknown>((resolve) => {
    subscription = source.subscribe({
      next: (e) => elements.push(e),
      error: (error: unknown) => resolve(error),
      complete: () => resolve("complete"),
    });
  });
  return { elements, ended, unsubscribe: () => subscription?.unsubscribe() };
}

describe("per-subscriber stream authorization", () => {
  it("probes updates over the empty range at the request's begin, with the subscriber's token", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(endpoint, { beginExclusive: 7, updateFormat: {} }, "t", undefined);
    assert.deepEqual(opened, [{ beginExclusive: 7, endInclusive: 7, updateFormat: {} }]);
  });

  it("re-probes from the newest offset the subscriber got", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(endpoint, { beginExclusive: 7 }, "t", '{"offset":12}');
    assert.deepEqual(opened, [{ beginExclusive: 12, endInclusive: 12 }]);
  });

  it("probes updates from offset 0 over (0, 1] once the ledger is known to have reached 1, the open-ended request before", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(
      endpoint,
      { beginExclusive: 0, updateFormat: {} },
      "t",
      undefined,
      undefined,
      undefined,
      3,
    );
    await probeSubscriber(endpoint, { updateFormat: {} }, "t", undefined, undefined, undefined, 1);
    await probeSubscriber(endpoint, { beginExclusive: 0, updateFormat: {} }, "t", undefined);
    assert.deepEqual(opened, [
      { beginExclusive: 0, endInclusive: 1, updateFormat: {} },
      { beginExclusive: 0, endInclusive: 1, updateFormat: {} },
      { beginExclusive: 0, updateFormat: {} },
    ]);
  });

  it("holds every element until the ledger admitted the subscriber", async () => {
    const admission = new Subject<string>();
    const { endpoint } = updatesEndpoint(() => admission);
    const source = new Subject<string>();
    const got = collect(
      source.pipe(authorizeSubscriber(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 0 })),
    );
    source.next('{"offset":2}');
    source.next('{"offset":3}');
    assert.deepEqual(got.elements, []);
    admission.complete();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(got.elements, ['{"offset":2}', '{"offset":3}']);
    source.next('{"offset":4}');
    assert.equal(got.elements.length, 3);
    got.unsubscribe();
  });

  it("refuses with the ledger's own error and delivers nothing", async () => {
    const refusal = grpcError(status.PERMISSION_DENIED);
    const { endpoint } = updatesEndpoint(() => new Observable<string>((s) => s.error(refusal)));
    const source = new Subject<string>();
    const got = collect(
      source.pipe(authorizeSubscriber(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 0 })),
    );
    source.next('{"offset":2}');
    assert.equal(await got.ended, refusal);
    assert.deepEqual(got.elements, []);
    assert.equal(source.observed, false, "the source is unsubscribed");
  });

  it("ends with STALE_STREAM_AUTHORIZATION when a re-check is refused", async () => {
    let refuse = false;
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) => (refuse ? s.error(grpcError(status.PERMISSION_DENIED)) : s.complete())),
    );
    const source = new Subject<string>();
    const got = collect(
      source.pipe(authorizeSubscriber(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 5 })),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    refuse = true;
    const error = await got.ended;
    assert.ok(error instanceof CantonHttpError);
    const body = errorFrameBody(error);
    assert.equal(body.code, "STALE_STREAM_AUTHORIZATION");
    assert.equal(body.cause, "Stale stream authorization. Retry quickly.");
    assert.equal(body.errorCategory, 2);
    assert.equal(body.grpcCodeValue, status.ABORTED);
    assert.equal(body.retryInfo, "0 seconds");
    assert.equal(body.definiteAnswer, false);
  });

  it("keeps streaming while the ledger is unavailable for a re-check, and asks again", async () => {
    let probes = 0;
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) => {
          probes++;
          if (probes === 1) s.complete();
          else if (probes <= 3) s.error(grpcError(status.UNAVAILABLE));
          else s.error(grpcError(status.UNAUTHENTICATED));
        }),
    );
    const source = new Subject<string>();
    const got = collect(
      source.pipe(authorizeSubscriber(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 5 })),
    );
    const error = await got.ended;
    assert.equal(errorFrameBody(error).code, "STALE_STREAM_AUTHORIZATION");
    assert.equal(probes, 4, "two UNAVAILABLE re-checks passed, the refusal ended it");
  });

  it("trusts a source that admits by itself (sourceAdmits): no admission probe, re-checks from the first", async () => {
    let refuse = false;
    const { endpoint, opened } = updatesEndpoint(
      () =>
        new Observable<string>((s) => (refuse ? s.error(grpcError(status.PERMISSION_DENIED)) : s.complete())),
    );
    const source = new Subject<string>();
    const got = collect(
      source.pipe(
        authorizeSubscriber(endpoint, { beginExclusive: 1 }, undefined, {
          recheckIntervalMs: 5,
          sourceAdmits: true,
        }),
      ),
    );
    source.next('{"offset":2}');
    assert.deepEqual(got.elements, ['{"offset":2}']);
    assert.equal(opened.length, 0, "no admission probe");
    refuse = true;
    assert.equal(errorFrameBody(await got.ended).code, "STALE_STREAM_AUTHORIZATION");
    assert.deepEqual(opened.at(-1), { beginExclusive: 2, endInclusive: 2 });
  });

  it("re-checks a crowd of one token and request with one probe, and another token with its own", async () => {
    // Unanswered until the test says so: every re-check stays in flight, whatever the ticks.
    const answers = new Subject<void>();
    const { endpoint, opened } = updatesEndpoint(
      () =>
        new Observable<string>((s) => {
          const answered = answers.subscribe(() => s.complete());
          return () => answered.unsubscribe();
        }),
    );
    const source = new Subject<string>();
    const subscribe = (user: string) =>
      collect(
        source.pipe(
          authorizeSubscriber(endpoint, { beginExclusive: 1 }, signToken(user), {
            recheckIntervalMs: 10,
            sourceAdmits: true,
          }),
        ),
      );
    const subscribers = [...Array.from({ length: 20 }, () => subscribe("alice")), subscribe("bob")];
    source.next('{"offset":2}');
    await until(() => opened.length >= 2, { observed: () => `${opened.length} probes` });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Several ticks have passed: 21 subscribers, two questions (alice's crowd's, bob's).
    assert.equal(opened.length, 2, `${opened.length} probes`);
    answers.next();
    for (const got of subscribers) {
      assert.deepEqual(got.elements, ['{"offset":2}']);
      got.unsubscribe();
    }
  });

  it("reports a re-check refused once the token expired as ACCESS_TOKEN_EXPIRED, not as stale", async () => {
    const token = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 60 });
    let at = Date.now();
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) => {
          // The ledger answers after the token's exp: the expiry timer has not run yet.
          at += 120_000;
          s.error(grpcError(status.UNAUTHENTICATED));
        }),
    );
    const got = collect(
      new Subject<string>().pipe(
        authorizeSubscriber(endpoint, { beginExclusive: 1 }, token, {
          recheckIntervalMs: 5,
          sourceAdmits: true,
          now: () => at,
        }),
      ),
    );
    assert.equal(errorFrameBody(await got.ended).code, "ACCESS_TOKEN_EXPIRED");
  });

  it("ends with ACCESS_TOKEN_EXPIRED at the token's exp", async () => {
    const exp = Math.floor(Date.now() / 1000) + 1;
    const token = signToken("alice", { exp });
    const { endpoint } = updatesEndpoint(empty);
    const source = new Subject<string>();
    const got = collect(
      source.pipe(authorizeSubscriber(endpoint, { beginExclusive: 1 }, token, { recheckIntervalMs: 0 })),
    );
    const error = await got.ended;
    const body = errorFrameBody(error);
    assert.equal(body.code, "ACCESS_TOKEN_EXPIRED");
    assert.match(
      body.cause,
      new RegExp(
        `^Claims were valid until ${new Date(exp * 1000).toISOString().replace(".000Z", "Z")}, current time is \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{3})?Z$`,
      ),
    );
    assert.equal(body.errorCategory, 2);
    assert.equal(body.grpcCodeValue, status.ABORTED);
    assert.equal(body.retryInfo, "1 second");
    assert.equal(body.definiteAnswer, false);
    assert.equal(source.observed, false);
  });

  it("leaves endpoints it cannot probe to their own call (expiry still applies)", async () => {
    const endpoint: StreamEndpoint = {
      ...updatesEndpoint(empty).endpoint,
      requestSchema: "CounterRequest",
      open: () => {
        throw new Error("not probed");
      },
    };
    const source = new Subject<string>();
    const got = collect(source.pipe(authorizeSubscriber(endpoint, {}, undefined, { recheckIntervalMs: 5 })));
    source.next("a");
    source.complete();
    assert.equal(await got.ended, "complete");
    assert.deepEqual(got.elements, ["a"]);
  });
});
