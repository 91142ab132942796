import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Gauge, Histogram } from "prom-client";
import { lastValueFrom, toArray } from "rxjs";
import { ledgerStreamEndpoints } from "../../src/endpoints/ledger-streams.js";
import type { StreamEndpoint } from "../../src/endpoints/stream-endpoint.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { updatesSocket } from "../support/updates-socket.js";
import { allocate, call, createIouTransaction, userFor } from "./ledger-client.js";

/** What the tests read of a MAXIMUM_NUMBER_OF_STREAMS body or frame. */
interface Refusal {
  code: string;
  errorCategory: number;
  retryInfo: string | null;
  context: Record<string, string>;
  cause: string;
}

const sum = async (metric: Gauge | Histogram | undefined, name?: string, purpose?: string) => {
  assert.ok(metric);
  const { values } = await metric.get();
  return values
    .filter((v) => name === undefined || (v as { metricName?: string }).metricName === name)
    .filter((v) => purpose === undefined || v.labels.purpose === purpose)
    .reduce((total, { value }) => total + value, 0);
};

/**
 * A stack with this budget, parties whose open-ended update streams each take their own ledger
 * call (one party each: no fan-out between them), a reader of them all, and a bounded request.
 */
function stackWithBudget(args: string[], parties: number) {
  let stack: Stack;
  let endpoints: readonly StreamEndpoint[] = [];
  const party: string[] = [];
  let reader = "";
  let end = 0;
  before(async () => {
    stack = await startStack(
      [
        ...args,
        // One reader opens every stream here: these tests are of the budget's own bounds, so a
        // share per user that no test reaches (test/e2e/fail-closed/budget-one-user.test.ts tests it).
        "--limits.ledger-streams-per-user",
        "100",
        // No re-check probes: they would be streams of their own on the ledger beside the ones counted.
        "--websocket-config.stream-authorization-recheck-interval",
        "0s",
      ],
      {
        streamEndpoints: (deps) => {
          endpoints = ledgerStreamEndpoints(deps);
          return endpoints;
        },
      },
    );
    for (let i = 0; i < parties; i++) party.push(await allocate(stack, `budget_${i}`));
    await call(stack, "POST", "/v2/users", {
      user: { id: "budget-reader" },
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    reader = tokenFor("budget-reader");
    const issuer = party[0] as string;
    const issuerToken = await userFor(stack, "budget-issuer", [issuer]);
    const created = await createIouTransaction(stack, issuerToken, "budget-setup", {
      issuer,
      owner: issuer,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, reader)).body
      .offset;
  });
  after(() => stack.stop());
  const metrics = () => stack.gateway.metrics;
  return {
    stack: () => stack,
    reader: () => reader,
    party: (i: number) => party[i] as string,
    end: () => end,
    endpoint: (path: string) => {
      const found = endpoints.find((endpoint) => endpoint.path === path);
      assert.ok(found, path);
      return found;
    },
    /** An open-ended WebSocket stream of party `i`: one ledger call while it is open. */
    subscribe: (i: number) =>
      updatesSocket(stack.url, reader, updatesRequest(partyFilter(party[i] as string))),
    /** A list twin of party `i`'s updates up to the ledger end: its call ends by itself. */
    list: (i: number) =>
      call<unknown[] | Refusal>(
        stack,
        "POST",
        "/v2/updates",
        updatesRequest(partyFilter(party[i] as string), 0, end),
        reader,
      ),
    open: () => sum(metrics()?.ledgerStreamsOpen),
    queued: (purpose = "subscription") => sum(metrics()?.ledgerStreamsQueued, undefined, purpose),
    refused: async (reason: string, purpose = "subscription") => {
      const counter = metrics()?.ledgerStreamsRefused;
      assert.ok(counter);
      return (
        (await counter.get()).values.find((v) => v.labels.reason === reason && v.labels.purpose === purpose)
          ?.value ?? 0
      );
    },
    waits: (purpose = "subscription") =>
      sum(
        metrics()?.ledgerStreamsQueueWait,
        "ledger_gateway_ledger_streams_queue_wait_seconds_count",
        purpose,
      ),
  };
}

function assertRefused(refusal: Refusal, reason: string, limit: number): void {
  assert.equal(refusal.code, "MAXIMUM_NUMBER_OF_STREAMS");
  assert.equal(refusal.errorCategory, 2);
  assert.equal(refusal.retryInfo, "1 second");
  assert.deepEqual(refusal.context, { limit: "limits.ledger-streams", value: String(limit), reason });
}

describe("limits.ledger-streams over real sockets: budget 3 (2 for subscriptions, 1 kept for authorization calls), queue 2", () => {
  const budget = stackWithBudget(
    [
      "--limits.ledger-streams",
      "3",
      "--limits.ledger-streams-queue",
      "2",
      "--limits.ledger-streams-queue-timeout",
      "120s",
    ],
    6,
  );

  it("opens 2 calls, queues the next 2 and answers them in arrival order as slots free, refusing the 5th with 429 (list twin) and an error frame (WebSocket)", async () => {
    const stack = budget.stack();
    assert.equal(await sum(stack.gateway.metrics?.ledgerStreamsBudget), 3);
    const a = budget.subscribe(0);
    const b = budget.subscribe(1);
    await until(async () => (await budget.open()) === 2);

    const answered: string[] = [];
    const c = budget.list(2).then((reply) => {
      answered.push("c");
      return reply;
    });
    await until(async () => (await budget.queued()) === 1);
    const d = budget.list(3).then((reply) => {
      answered.push("d");
      return reply;
    });
    await until(async () => (await budget.queued()) === 2);

    const refusedList = await budget.list(4);
    assert.equal(refusedList.status, 429);
    assertRefused(refusedList.body as Refusal, "queue-full", 3);
    const refusedSocket = await budget.subscribe(5).ended;
    assert.equal(refusedSocket.frames.length, 1);
    assertRefused(refusedSocket.frames[0] as unknown as Refusal, "queue-full", 3);
    assert.equal(await budget.refused("queue-full"), 2);
    // Refused, nothing was opened for them, and nothing answered the waiters.
    assert.equal(await budget.open(), 2);
    assert.deepEqual(answered, []);

    a.socket.close(1000);
    const [cReply, dReply] = await Promise.all([c, d]);
    assert.deepEqual(answered, ["c", "d"]);
    assert.equal(cReply.status, 200, JSON.stringify(cReply.body));
    assert.equal(dReply.status, 200, JSON.stringify(dReply.body));
    assert.equal(await budget.queued(), 0);
    assert.equal(await budget.waits(), 2);
    await until(async () => (await budget.open()) === 1);

    b.socket.close(1000);
    await Promise.all([a.ended, b.ended]);
    await until(async () => (await budget.open()) === 0);
    assert.equal(await budget.refused("queue-timeout"), 0);
  });

  it("takes a waiter that leaves out of the queue: its place goes to a newcomer and its slot to the next in line", async () => {
    const a = budget.subscribe(0);
    const b = budget.subscribe(1);
    await until(async () => (await budget.open()) === 2);
    const leaver = budget.subscribe(2);
    await until(async () => (await budget.queued()) === 1);
    const next = budget.subscribe(3);
    await until(async () => (await budget.queued()) === 2);

    leaver.socket.close(1000);
    await leaver.ended;
    await until(async () => (await budget.queued()) === 1);
    const refusedBefore = await budget.refused("queue-full");
    const newcomer = budget.list(4);
    await until(async () => (await budget.queued()) === 2);
    assert.equal(await budget.refused("queue-full"), refusedBefore, "the leaver's place was free");

    // The next in line gets a's slot: an open-ended stream, so the newcomer still waits.
    a.socket.close(1000);
    await until(async () => (await budget.queued()) === 1);
    assert.equal(await budget.open(), 2);
    // b's slot goes to the newcomer, whose bounded call answers.
    b.socket.close(1000);
    const reply = await newcomer;
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(await budget.queued(), 0);
    next.socket.close(1000);
    await Promise.all([a.ended, b.ended, next.ended]);
    await until(async () => (await budget.open()) === 0);
    assert.deepEqual(leaver.ended && (await leaver.ended).frames, []);
  });
});

describe("limits.ledger-streams over real sockets: fan-out members", () => {
  const budget = stackWithBudget(
    ["--limits.ledger-streams", "3", "--limits.ledger-streams-queue-timeout", "120s"],
    1,
  );

  it("takes one slot for a shared stream whatever its subscribers: a joiner's admission probe holds one only while it runs", async () => {
    const metrics = budget.stack().gateway.metrics;
    const subscribers = () => sum(metrics?.fanoutSubscribers);
    const sockets = [budget.subscribe(0)];
    await until(async () => (await budget.open()) === 1 && (await subscribers()) === 1);
    // Identical requests: they join the first one's ledger call, each after its empty-range probe.
    for (let joined = 2; joined <= 4; joined++) {
      sockets.push(budget.subscribe(0));
      await until(async () => (await subscribers()) === joined);
    }
    await until(async () => (await budget.open()) === 1);
    assert.equal(await sum(metrics?.fanoutUpstreams), 1);
    assert.equal(await budget.queued(), 0);
    // The other slot is free: a stream of its own opens at once.
    const reply = await budget.list(0);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    for (const { socket } of sockets) socket.close(1000);
    await Promise.all(sockets.map(({ ended }) => ended));
    await until(async () => (await budget.open()) === 0);
  });
});

describe("limits.ledger-streams-queue-timeout over real sockets: budget 2 (1 for subscriptions)", () => {
  const budget = stackWithBudget(
    [
      "--limits.ledger-streams",
      "2",
      "--limits.ledger-streams-queue",
      "5",
      "--limits.ledger-streams-queue-timeout",
      "200ms",
    ],
    3,
  );

  it("refuses a waiter that got no slot within the longest wait, as 429 and as an error frame", async () => {
    const a = budget.subscribe(0);
    await until(async () => (await budget.open()) === 1);

    const refusedList = await budget.list(1);
    assert.equal(refusedList.status, 429);
    const body = refusedList.body as Refusal;
    assertRefused(body, "queue-timeout", 2);
    assert.match(body.cause, /limits\.ledger-streams-queue-timeout \(200 ms\)/);
    const refusedSocket = await budget.subscribe(2).ended;
    assertRefused(refusedSocket.frames[0] as unknown as Refusal, "queue-timeout", 2);
    assert.equal(await budget.refused("queue-timeout"), 2);
    assert.equal(await budget.queued(), 0);
    assert.equal(await budget.open(), 1);

    a.socket.close(1000);
    await a.ended;
    await until(async () => (await budget.open()) === 0);
    // The slot is free again: a stream opens at once.
    const again = await budget.list(1);
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });
});

describe("limits.ledger-streams-reserved-for-authorization over real sockets: budget 3, 1 kept for authorization calls", () => {
  // A probe that waited as a subscription would be refused after 30 s: the test fails, it does not hang.
  const budget = stackWithBudget(
    ["--limits.ledger-streams", "3", "--limits.ledger-streams-queue-timeout", "30s"],
    3,
  );

  it("runs an authorization call of an endpoint (probe) at once while subscriptions fill their share and another waits, and keeps the reserve from that waiter", async () => {
    const sockets = [budget.subscribe(0), budget.subscribe(1)];
    await until(async () => (await budget.open()) === 2);
    const waiter = budget.subscribe(2);
    await until(async () => (await budget.queued()) === 1);

    // The empty range at the ledger end: the ledger's answer on the reader's token is the end.
    const updates = budget.endpoint("/v2/updates");
    const request = updatesRequest(partyFilter(budget.party(0)), budget.end(), budget.end());
    const answered = await lastValueFrom(updates.probe(request, budget.reader()).pipe(toArray()));
    assert.deepEqual(answered, []);
    // A ledger call on the token it was given: a token the ledger refuses gets its refusal.
    const stranger = tokenFor("budget-stranger");
    await assert.rejects(lastValueFrom(updates.probe(request, stranger)), (error: { code?: number }) => {
      assert.ok(
        error.code === 7 || error.code === 16,
        `PERMISSION_DENIED or UNAUTHENTICATED, got ${error.code}`,
      );
      return true;
    });

    assert.equal(await budget.waits("authorization"), 0, "no authorization call waited");
    assert.equal(await budget.queued("authorization"), 0);
    assert.equal(await budget.refused("queue-full", "authorization"), 0);
    // The probes' slot went back to the reserve, not to the waiting subscription.
    assert.equal(await budget.queued(), 1);
    assert.equal(await budget.open(), 2);

    sockets[0]?.socket.close(1000);
    await until(async () => (await budget.queued()) === 0 && (await budget.open()) === 2);
    for (const { socket } of [...sockets, waiter]) socket.close(1000);
    await Promise.all([...sockets, waiter].map(({ ended }) => ended));
    await until(async () => (await budget.open()) === 0);
  });
});

/**
 * An open-ended list twin waits out its idle time (1 s by default) from when its call is sent,
 * not while it waits for a slot: found by a black-box test, which got `200 []` for a party with
 * 262 updates while another user held the subscriptions' share of the budget.
 */
describe("an open-ended list twin whose call waits for a slot of the budget", () => {
  const budget = stackWithBudget(
    ["--limits.ledger-streams", "2", "--limits.ledger-streams-queue-timeout", "3s"],
    1,
  );
  const openEnded = () =>
    call<unknown[] | Refusal>(
      budget.stack(),
      "POST",
      "/v2/updates",
      updatesRequest(partyFilter(budget.party(0)), 0),
      budget.reader(),
    );

  it("answers the ledger's elements once the slot comes, not the empty list of its idle wait", async () => {
    const holder = budget.subscribe(0);
    await until(async () => (await budget.open()) === 1);
    const list = openEnded();
    await until(async () => (await budget.queued()) === 1);
    // Past the idle wait, still queued: nothing was read, so nothing is answered yet.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    holder.socket.close(1000);
    const answer = await list;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const first = (answer.body as { update?: { Transaction?: { value: { commandId: string } } } }[])[0];
    assert.equal(first?.update?.Transaction?.value.commandId, "budget-setup", JSON.stringify(answer.body));
  });

  it("answers 429 when no slot comes within the queue's longest wait, not an empty list", async () => {
    const holder = budget.subscribe(0);
    await until(async () => (await budget.open()) === 1);
    const answer = await openEnded();
    assert.equal(answer.status, 429, JSON.stringify(answer.body));
    assertRefused(answer.body as Refusal, "queue-timeout", 2);
    holder.socket.close(1000);
    await holder.ended;
  });
});
