import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Metadata, status } from "@grpc/grpc-js";
import { Observable, Subject, type Subscription } from "rxjs";
import {
  admitJoiner,
  probeSubscriber,
  QUESTION_DEADLINE_MS,
  UnansweredQuestion,
} from "../../src/endpoints/ledger-questions.js";
import {
  authorizeSubscriber,
  confirmedBy,
  subscriberGrant,
} from "../../src/endpoints/stream-authorization.js";
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

/** A subscriber's gate over `source`, with a new grant on `token`; `admitted`: confirmed by its own call. */
function gated(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  options: { recheckIntervalMs: number; now?: () => number; graceMs?: number; admitted?: boolean },
  source: Observable<string>,
) {
  const now = options.now ?? Date.now;
  const grant = subscriberGrant(token, options.recheckIntervalMs, options.graceMs ?? 0, now);
  const confirmed = options.admitted ? source.pipe(confirmedBy(grant, token, now)) : source;
  const got = collect(
    confirmed.pipe(
      authorizeSubscriber(endpoint, request, { grant, recheckIntervalMs: options.recheckIntervalMs, now }),
    ),
  );
  return { ...got, grant };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("per-subscriber stream authorization", () => {
  it("probes updates over the empty range at the request's begin, with the subscriber's token", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(endpoint, { beginExclusive: 7, updateFormat: {} }, "t");
    assert.deepEqual(opened, [{ beginExclusive: 7, endInclusive: 7, updateFormat: {} }]);
  });

  it("re-probes from the newest offset the subscriber stands at", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(endpoint, { beginExclusive: 7 }, "t", { from: 12 });
    assert.deepEqual(opened, [{ beginExclusive: 12, endInclusive: 12 }]);
  });

  it("probes updates from offset 0 over (0, 1] once the ledger is known to have reached 1, the open-ended request before", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    await probeSubscriber(endpoint, { beginExclusive: 0, updateFormat: {} }, "t", { reached: 3 });
    await probeSubscriber(endpoint, { updateFormat: {} }, "t", { reached: 1 });
    await probeSubscriber(endpoint, { beginExclusive: 0, updateFormat: {} }, "t");
    assert.deepEqual(opened, [
      { beginExclusive: 0, endInclusive: 1, updateFormat: {} },
      { beginExclusive: 0, endInclusive: 1, updateFormat: {} },
      { beginExclusive: 0, updateFormat: {} },
    ]);
  });

  it("never takes silence for a yes: an open-ended probe that sends nothing is unanswered at its deadline", async () => {
    const { endpoint } = updatesEndpoint(() => new Observable<string>(() => {}));
    const controller = new AbortController();
    let settled: unknown = "pending";
    const probe = probeSubscriber(endpoint, { beginExclusive: 0 }, "t", { signal: controller.signal }).then(
      () => "admitted",
      (error: unknown) => error,
    );
    void probe.then((outcome) => {
      settled = outcome;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assert.equal(settled, "pending", "more than the old one-second settle: still no answer, so no yes");
    controller.abort();
    assert.ok((await probe) instanceof UnansweredQuestion);
  });

  it("holds every element until the ledger admitted the subscriber", async () => {
    const admission = new Subject<string>();
    const { endpoint } = updatesEndpoint(() => admission);
    const source = new Subject<string>();
    const got = gated(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 0 }, source);
    source.next('{"offset":2}');
    source.next('{"offset":3}');
    assert.deepEqual(got.elements, []);
    admission.complete();
    await until(() => got.elements.length === 2, { observed: () => `${got.elements.length} elements` });
    assert.deepEqual(got.elements, ['{"offset":2}', '{"offset":3}']);
    source.next('{"offset":4}');
    assert.equal(got.elements.length, 3);
    got.unsubscribe();
  });

  it("refuses with the ledger's own error and delivers nothing", async () => {
    const refusal = grpcError(status.PERMISSION_DENIED);
    const { endpoint } = updatesEndpoint(() => new Observable<string>((s) => s.error(refusal)));
    const source = new Subject<string>();
    const got = gated(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 0 }, source);
    source.next('{"offset":2}');
    assert.equal(await got.ended, refusal);
    assert.deepEqual(got.elements, []);
    assert.equal(source.observed, false, "the source is unsubscribed");
  });

  it("lets a call on the subscriber's own token admit it: no probe", async () => {
    const { endpoint, opened } = updatesEndpoint(empty);
    const source = new Subject<string>();
    const got = gated(endpoint, { beginExclusive: 1 }, "t", { recheckIntervalMs: 0, admitted: true }, source);
    source.next('{"offset":2}');
    assert.deepEqual(got.elements, ['{"offset":2}']);
    assert.equal(opened.length, 0, "no admission probe");
    got.unsubscribe();
  });

  it("ends with STALE_STREAM_AUTHORIZATION when a re-check is refused", async () => {
    let refuse = false;
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) => (refuse ? s.error(grpcError(status.PERMISSION_DENIED)) : s.complete())),
    );
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      undefined,
      { recheckIntervalMs: 5, admitted: true },
      source,
    );
    source.next('{"offset":2}');
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

  it("ends with STALE_STREAM_AUTHORIZATION when re-checks go unanswered for twice the interval, and sends nothing stale", async () => {
    let at = 1_000_000;
    let answer: "yes" | "unavailable" = "yes";
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) =>
          answer === "yes" ? s.complete() : s.error(grpcError(status.UNAVAILABLE)),
        ),
    );
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      undefined,
      { recheckIntervalMs: 1_000, now: () => at, admitted: true },
      source,
    );
    source.next('{"offset":2}');
    assert.equal(got.elements.length, 1);
    answer = "unavailable";
    at += 2_001;
    // No answer for 2.001 s: the element is not sent, and the subscriber ends.
    source.next('{"offset":3}');
    assert.equal(errorFrameBody(await got.ended).code, "STALE_STREAM_AUTHORIZATION");
    assert.deepEqual(got.elements, ['{"offset":2}']);
  });

  it("ends a subscriber never admitted whose question went unanswered for twice the interval with STREAM_ADMISSION_NOT_CONFIRMED, not STALE_STREAM_AUTHORIZATION", async () => {
    let at = 1_000_000;
    // The admission question is never answered (queued behind others, a slow ledger).
    const { endpoint } = updatesEndpoint(() => new Observable<string>(() => {}));
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      undefined,
      { recheckIntervalMs: 1_000, now: () => at },
      source,
    );
    source.next('{"offset":2}');
    at += 2_001;
    source.next('{"offset":3}');
    const body = errorFrameBody(await got.ended);
    assert.equal(body.code, "STREAM_ADMISSION_NOT_CONFIRMED");
    assert.deepEqual(got.elements, []);
  });

  it("ends a subscriber never admitted at once with the stream budget's 429 when the budget refuses its question", async () => {
    const refusal = new CantonHttpError(429, {
      code: "MAXIMUM_NUMBER_OF_STREAMS",
      cause: "this user's share",
      context: { limit: "limits.ledger-streams-per-user" },
    } as never);
    const { endpoint } = updatesEndpoint(() => new Observable<string>((s) => s.error(refusal)));
    const source = new Subject<string>();
    const got = gated(endpoint, { beginExclusive: 1 }, undefined, { recheckIntervalMs: 1_000 }, source);
    source.next('{"offset":2}');
    assert.equal(await got.ended, refusal);
    assert.deepEqual(got.elements, []);
  });

  it("holds elements while the ledger is away (within the grace), and sends them on a fresh yes", async () => {
    let at = 1_000_000;
    let answer: "yes" | "unavailable" = "yes";
    const { endpoint, opened } = updatesEndpoint(
      () =>
        new Observable<string>((s) =>
          answer === "yes" ? s.complete() : s.error(grpcError(status.UNAVAILABLE)),
        ),
    );
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      undefined,
      { recheckIntervalMs: 1_000, now: () => at, graceMs: 30_000, admitted: true },
      source,
    );
    source.next('{"offset":2}');
    answer = "unavailable";
    // A re-check (the clock's next tick) finds the ledger away.
    at += 1_100;
    await until(() => opened.length >= 1, { observed: () => `${opened.length} questions` });
    await tick();
    at += 1_000;
    source.next('{"offset":3}');
    await tick();
    source.next('{"offset":4}');
    await tick();
    assert.deepEqual(got.elements, ['{"offset":2}'], "held, not sent, not ended: the ledger is away");
    answer = "yes";
    at += 1_000;
    source.next('{"offset":5}');
    await until(() => got.elements.length === 4, { observed: () => got.elements.join() });
    assert.deepEqual(got.elements, ['{"offset":2}', '{"offset":3}', '{"offset":4}', '{"offset":5}']);
    assert.deepEqual(
      opened.at(-1),
      { beginExclusive: 5, endInclusive: 5 },
      "asked from the newest offset it holds",
    );
    got.unsubscribe();
  });

  it("re-checks a crowd of one token and request with one probe, and another token or request with its own", async () => {
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
    // One token each (signed once: two signatures a second apart differ in `exp`, and are two tokens).
    const alice = signToken("alice");
    const bob = signToken("bob");
    const subscribe = (token: string, request: object = { beginExclusive: 1 }) =>
      gated(endpoint, request, token, { recheckIntervalMs: 10, admitted: true }, source);
    const subscribers = [
      ...Array.from({ length: 20 }, () => subscribe(alice)),
      subscribe(bob),
      subscribe(alice, { beginExclusive: 1, verbose: true }),
    ];
    source.next('{"offset":2}');
    await until(() => opened.length >= 3, { observed: () => `${opened.length} probes` });
    await new Promise((resolve) => setTimeout(resolve, 15));
    // Ticks have passed: 22 subscribers, three questions (alice's crowd's, bob's, alice's other request's).
    assert.equal(opened.length, 3, `${opened.length} probes`);
    assert.equal(opened.filter((probe) => probe.verbose === true).length, 1);
    answers.next();
    for (const got of subscribers) {
      assert.deepEqual(got.elements, ['{"offset":2}']);
      got.unsubscribe();
    }
  });

  it("reports a re-check refused once the token expired as ACCESS_TOKEN_EXPIRED, not as stale", async () => {
    const token = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 60 });
    let at = Date.now();
    let probes = 0;
    const { endpoint } = updatesEndpoint(
      () =>
        new Observable<string>((s) => {
          probes += 1;
          if (probes === 1) return s.complete();
          // The ledger answers after the token's exp: the expiry timer has not run yet.
          at += 120_000;
          s.error(grpcError(status.UNAUTHENTICATED));
        }),
    );
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      token,
      { recheckIntervalMs: 5, now: () => at },
      source,
    );
    source.next('{"offset":2}');
    assert.equal(errorFrameBody(await got.ended).code, "ACCESS_TOKEN_EXPIRED");
  });

  it("ends with ACCESS_TOKEN_EXPIRED at the token's exp", async () => {
    const exp = Math.floor(Date.now() / 1000) + 1;
    const token = signToken("alice", { exp });
    const { endpoint } = updatesEndpoint(empty);
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      token,
      { recheckIntervalMs: 0, admitted: true },
      source,
    );
    source.next('{"offset":2}');
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

  it("leaves a token that expires before the ledger admitted its subscriber to the ledger's own refusal", async () => {
    const token = signToken("alice", { exp: Math.floor(Date.now() / 1000) - 60 });
    const refusal = grpcError(status.UNAUTHENTICATED);
    const { endpoint } = updatesEndpoint(() => new Observable<string>((s) => s.error(refusal)));
    const source = new Subject<string>();
    // Time stands still: a re-check that a loaded machine runs late finds the admission due, not
    // overdue (overdue is the 503 of an admission the ledger never answered).
    const at = Date.now();
    const got = gated(
      endpoint,
      { beginExclusive: 1 },
      token,
      { recheckIntervalMs: 5, now: () => at },
      source,
    );
    assert.equal(
      await got.ended,
      refusal,
      "the ledger's UNAUTHENTICATED, as Canton answers an expired token",
    );
  });

  it("renews one token at a time: a newer frame replaces the one waiting; a refused one leaves the old token", async () => {
    const answers: Subject<string>[] = [];
    const { endpoint } = updatesEndpoint(() => {
      const answer = new Subject<string>();
      answers.push(answer);
      return answer;
    });
    const old = signToken("alice");
    const grant = subscriberGrant(old, 0, 0);
    const tokens$ = new Subject<string>();
    const renewed: string[] = [];
    const refused: unknown[] = [];
    const source = new Subject<string>();
    const got = collect(
      source.pipe(
        confirmedBy(grant, old),
        authorizeSubscriber(
          endpoint,
          { beginExclusive: 1 },
          {
            grant,
            recheckIntervalMs: 0,
            renewals: { tokens$, renewed: (t) => renewed.push(t), refused: (e) => refused.push(e) },
          },
        ),
      ),
    );
    source.next('{"offset":2}');
    const [first, second, third] = [
      signToken("alice", { extra: { n: 1 } }),
      signToken("alice", { extra: { n: 2 } }),
      signToken("alice", { extra: { n: 3 } }),
    ];
    tokens$.next(first as string);
    tokens$.next(second as string);
    tokens$.next(third as string);
    assert.equal(answers.length, 1, "one renewal question in flight");
    (answers[0] as Subject<string>).error(grpcError(status.PERMISSION_DENIED));
    await until(() => answers.length === 2, { observed: () => `${answers.length} questions` });
    assert.equal(grant.token, old, "a refused renewal leaves the token");
    (answers[1] as Subject<string>).complete();
    await until(() => renewed.length === 1, { observed: () => `${renewed.length} renewed` });
    assert.deepEqual(renewed, [third], "the newest frame replaced the one that waited");
    assert.equal(grant.token, third);
    assert.equal(refused.length, 1);
    got.unsubscribe();
  });

  it("sends nothing for an endpoint it cannot ask about once its own call's yes is stale", async () => {
    let at = 1_000_000;
    const endpoint: StreamEndpoint = {
      ...updatesEndpoint(empty).endpoint,
      requestSchema: "CounterRequest",
      open: () => {
        throw new Error("not probed");
      },
    };
    const source = new Subject<string>();
    const got = gated(
      endpoint,
      {},
      undefined,
      { recheckIntervalMs: 1_000, now: () => at, admitted: true },
      source,
    );
    source.next('{"offset":1}');
    at += 2_001;
    source.next('{"offset":2}');
    assert.equal(errorFrameBody(await got.ended).code, "STALE_STREAM_AUTHORIZATION");
    assert.deepEqual(got.elements, ['{"offset":1}']);
  });
});

describe("a question's deadline", () => {
  it("is cleared by the answer: no abort, 10 s later, for a question the ledger answered; one for one it never did", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const aborts = t.mock.method(AbortController.prototype, "abort");
    const token = signToken("alice");
    const request = { beginExclusive: 0, updateFormat: {} };
    const answered = updatesEndpoint(() => new Observable<string>((s) => s.next('{"offset":1}')));
    // Admitted: resolves with when it was asked.
    assert.equal(await admitJoiner(answered.endpoint, request, token, 0, undefined, () => 7), 7);
    t.mock.timers.tick(QUESTION_DEADLINE_MS);
    assert.equal(aborts.mock.callCount(), 0);
    const silent = updatesEndpoint(() => new Observable<string>(() => undefined));
    const unanswered = admitJoiner(silent.endpoint, request, token, 0);
    t.mock.timers.tick(QUESTION_DEADLINE_MS);
    assert.equal(await unanswered, undefined);
    assert.equal(aborts.mock.callCount(), 1);
  });
});
