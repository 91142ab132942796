import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";

type Json = Record<string, any>;

const SECRET = "stream-authorization-secret";
const token = (user: string, exp?: number) => signToken(user, { key: SECRET, ...(exp ? { exp } : {}) });
const IOU = "#gateway-samples:Iou:Iou";
const UPDATES = "/v2/updates";

/** One WebSocket subscriber: its frames as they come, its close code once closed. */
class Subscriber {
  readonly frames: Json[] = [];
  readonly closed: Promise<number>;
  readonly #socket: WebSocket;
  #waiters: (() => void)[] = [];

  constructor(stack: Stack, request: unknown, bearer: string) {
    this.#socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${UPDATES}`, [
      "daml.ws.auth",
      `jwt.token.${bearer}`,
    ]);
    this.#socket.on("open", () => this.#socket.send(JSON.stringify(request)));
    this.#socket.on("message", (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString("utf8")) as Json);
      this.#wake();
    });
    this.closed = new Promise((resolve) =>
      this.#socket.on("close", (code) => {
        resolve(code);
        this.#wake();
      }),
    );
  }

  /** Update ids of the transactions received. */
  get updateIds(): string[] {
    return this.frames
      .map((f) => f.update?.Transaction?.value?.updateId as string | undefined)
      .filter((id): id is string => id !== undefined);
  }

  /** The socket closed (by either side, or lost). */
  get isClosed(): boolean {
    return this.#socket.readyState === WebSocket.CLOSED;
  }

  /** Resolves once a transaction with this update id arrived (the test's timeout bounds it). */
  async received(updateId: string): Promise<void> {
    while (!this.updateIds.includes(updateId)) {
      if (this.#socket.readyState === WebSocket.CLOSED) {
        throw new Error(`closed ${await this.closed} before ${updateId}: ${JSON.stringify(this.frames)}`);
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  close(): Promise<number> {
    this.#socket.close(1000);
    return this.closed;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * Per-subscriber authorization of WebSocket streams over real sockets: gateway + sandbox in
 * HS256 mode, two subscribers of the same open-ended request (one shared ledger call).
 */
describe("stream authorization per subscriber (gateway + sandbox in HS256 mode)", () => {
  let stack: Stack;
  let alice: string;
  const admin = () => ({ token: token("participant_admin") });

  const api = async (method: string, path: string, body?: unknown, bearer = admin().token) => {
    const init = body === undefined ? { method } : jsonBody(method, body);
    const res = await stack.request(path, { ...init, token: bearer });
    const text = await res.text();
    assert.equal(res.status, 200, `${method} ${path}: ${text}`);
    return JSON.parse(text) as Json;
  };
  const readAs = (party: string) => ({ kind: { CanReadAs: { value: { party } } } });
  const createUser = (id: string, rights: unknown[]) => api("POST", "/v2/users", { user: { id }, rights });
  /** One new transaction visible to alice; its update id. */
  let commands = 0;
  const commit = async (): Promise<string> => {
    commands += 1;
    const reply = await api(
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      {
        commands: {
          commandId: `stream-authorization-${commands}`,
          actAs: [alice],
          commands: [
            {
              CreateCommand: {
                templateId: IOU,
                createArguments: {
                  issuer: alice,
                  owner: alice,
                  currency: "EUR",
                  amount: String(commands),
                  observers: [],
                },
              },
            },
          ],
        },
      },
      token("writer"),
    );
    return reply.transaction.updateId as string;
  };
  /** An open-ended request from the ledger end: every subscriber of it shares one ledger call. */
  const live = async () => ({
    beginExclusive: (await api("GET", "/v2/state/ledger-end")).offset as number,
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: {
            [alice]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] },
          },
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  });
  const metric = (name: string, labels: Record<string, string>): Promise<number> =>
    gatewayMetric(stack.url, name, ...Object.entries(labels).map(([k, v]) => `${k}="${v}"`));
  const sharedMembers = () =>
    metric("ledger_gateway_fanout_subscribers", { endpoint: UPDATES, mode: "shared" });
  const upstreams = () => metric("ledger_gateway_fanout_upstreams", { endpoint: UPDATES });
  /**
   * Waits until the shared stream has `count` members; fails at once when one of `subscribers`
   * closed meanwhile (a socket lost would otherwise leave the wait to the test's timeout, and its
   * members to the next tests).
   */
  const joined = (count: number, ...subscribers: Subscriber[]) =>
    until(async () => {
      const lost = subscribers.find((subscriber) => subscriber.isClosed);
      if (lost !== undefined)
        throw new Error(`closed ${await lost.closed} before it joined: ${JSON.stringify(lost.frames)}`);
      return (await sharedMembers()) === count;
    });
  /** The next test counts its own members from zero. */
  const allGone = () => until(async () => (await upstreams()) === 0 && (await sharedMembers()) === 0);

  before(async () => {
    stack = await startStack(
      ["--websocket-config.stream-authorization-recheck-interval", "200ms"],
      {},
      { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
    );
    const allocated = await api("POST", "/v2/parties", { partyIdHint: "alice" });
    alice = allocated.partyDetails.party as string;
    await createUser("writer", [{ kind: { CanActAs: { value: { party: alice } } } }]);
    for (const id of ["steady", "expiring", "revoked", "kept", "stranger"]) {
      await createUser(id, id === "stranger" ? [] : [readAs(alice)]);
    }
  });
  after(() => stack.stop());

  it("closes the subscriber whose token expires with ACCESS_TOKEN_EXPIRED; the other goes on", {
    timeout: 30_000,
  }, async () => {
    const request = await live();
    // The steady subscriber opens the shared call; the expiring one joins it.
    const steady = new Subscriber(stack, request, token("steady"));
    await joined(1, steady);
    const expiring = new Subscriber(stack, request, token("expiring", Math.floor(Date.now() / 1000) + 3));
    await joined(2, steady, expiring);
    assert.equal(await upstreams(), 1);

    const first = await commit();
    await Promise.all([steady.received(first), expiring.received(first)]);

    assert.equal(await expiring.closed, 1000);
    const last = expiring.frames.at(-1);
    assert.equal(last?.code, "ACCESS_TOKEN_EXPIRED", JSON.stringify(last));
    assert.match(String(last?.cause), /^Claims were valid until /);

    const second = await commit();
    await steady.received(second);
    assert.deepEqual(steady.updateIds, [first, second]);
    assert.deepEqual(expiring.updateIds, [first]);
    assert.equal(await steady.close(), 1000);
    await allGone();
  });

  it("moves the shared call onto the other subscriber's token before the one it runs on expires, without a gap", {
    timeout: 30_000,
  }, async () => {
    const handovers = () => metric("ledger_gateway_fanout_handovers_total", { endpoint: UPDATES });
    const rotations = () =>
      metric("ledger_gateway_fanout_rotations_total", { endpoint: UPDATES, cause: "expiry" });
    const [handoversBefore, rotationsBefore] = [await handovers(), await rotations()];
    const request = await live();
    // The expiring subscriber comes first: the shared call runs on its token.
    const owner = new Subscriber(stack, request, token("expiring", Math.floor(Date.now() / 1000) + 3));
    await joined(1, owner);
    const other = new Subscriber(stack, request, token("steady"));
    await joined(2, owner, other);
    assert.equal(await upstreams(), 1);
    // Within 10 s of the owner's expiry: the call moves onto the later token as it joins.
    await until(async () => (await rotations()) === rotationsBefore + 1);

    const first = await commit();
    await Promise.all([owner.received(first), other.received(first)]);
    assert.equal(await owner.closed, 1000);
    assert.equal(owner.frames.at(-1)?.code, "ACCESS_TOKEN_EXPIRED", JSON.stringify(owner.frames.at(-1)));
    const second = await commit();
    const third = await commit();
    await other.received(third);

    // Moved before the ledger ended the owner's call: no handover after it.
    assert.equal(await handovers(), handoversBefore);
    assert.deepEqual(other.updateIds, [first, second, third]);
    assert.deepEqual(owner.updateIds, [first]);
    assert.equal(await upstreams(), 1);
    assert.equal(await other.close(), 1000);
    await allGone();
  });

  it("closes the subscriber whose right is revoked with STALE_STREAM_AUTHORIZATION; the other goes on", {
    timeout: 30_000,
  }, async () => {
    const request = await live();
    const kept = new Subscriber(stack, request, token("kept"));
    await joined(1, kept);
    const revoked = new Subscriber(stack, request, token("revoked"));
    await joined(2, kept, revoked);
    assert.equal(await upstreams(), 1);

    const first = await commit();
    await Promise.all([kept.received(first), revoked.received(first)]);

    await api("PATCH", "/v2/users/revoked/rights", { userId: "revoked", rights: [readAs(alice)] });
    assert.equal(await revoked.closed, 1000);
    const last = revoked.frames.at(-1);
    assert.equal(last?.code, "STALE_STREAM_AUTHORIZATION", JSON.stringify(last));

    const second = await commit();
    await kept.received(second);
    assert.deepEqual(kept.updateIds, [first, second]);
    assert.deepEqual(revoked.updateIds, [first]);
    assert.equal(await kept.close(), 1000);
    await allGone();
  });

  it("gives a subscriber whose token cannot read the request the ledger's error frame and no element", {
    timeout: 30_000,
  }, async () => {
    const request = await live();
    const reader = new Subscriber(stack, request, token("steady"));
    await joined(1, reader);
    // It asks for a running shared stream: the ledger refuses it before it reads anything.
    const stranger = new Subscriber(stack, request, token("stranger"));
    assert.equal(await stranger.closed, 1000);
    assert.equal(stranger.frames.length, 1, JSON.stringify(stranger.frames));
    const [frame] = stranger.frames;
    assert.equal(frame?.update, undefined);
    assert.equal(typeof frame?.code, "string");
    assert.equal(typeof frame?.errorCategory, "number");

    const next = await commit();
    await reader.received(next);
    assert.deepEqual(stranger.updateIds, []);
    assert.equal(await reader.close(), 1000);
    await allGone();
  });

  it("judges joiners from the ledger's begin too (no empty range there): the stranger is refused, the reader joins with no call of its own", {
    timeout: 30_000,
  }, async () => {
    const first = await commit();
    const request = { ...(await live()), beginExclusive: 0 };
    const reader = new Subscriber(stack, request, token("steady"));
    await reader.received(first);
    const lateJoins = () =>
      metric("ledger_gateway_fanout_catch_ups_total", { endpoint: UPDATES, cause: "late_join" });
    const lateJoinsBefore = await lateJoins();
    // The shared stream has read offset 1 and more: the ledger is asked for (0, 1] on each token.
    const stranger = new Subscriber(stack, request, token("stranger"));
    assert.equal(await stranger.closed, 1000);
    assert.equal(stranger.frames.length, 1, JSON.stringify(stranger.frames));
    assert.equal(stranger.frames[0]?.update, undefined);
    assert.equal(typeof stranger.frames[0]?.code, "string");

    const kept = new Subscriber(stack, request, token("kept"));
    await kept.received(first);
    const next = await commit();
    await Promise.all([reader.received(next), kept.received(next)]);
    assert.deepEqual(kept.updateIds, reader.updateIds, "replayed from the shared stream's history, in order");
    assert.deepEqual(stranger.updateIds, []);
    assert.equal(await lateJoins(), lateJoinsBefore, "admitted by its probe: no catch-up call");
    assert.equal(await reader.close(), 1000);
    assert.equal(await kept.close(), 1000);
    await allGone();
  });
});
