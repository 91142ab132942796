import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AUDIENCE, signToken } from "../../jwt/test-tokens.js";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { call, createIouTransaction } from "../ledger-client.js";
import { type Frame, type WatchedSocket, watchedSocket } from "./watched-socket.js";

/** The ledger's key; the gateway has none (auth.mode none, the default): it does not verify tokens. */
const SECRET = "only-the-ledger-checks-this-secret";
const signed = (user: string) => signToken(user, { key: SECRET });
const admin = () => signed("participant_admin");

const updatesOf = (party: string, endInclusive?: number, copies = 1) => ({
  beginExclusive: 0,
  ...(endInclusive === undefined ? {} : { endInclusive }),
  updateFormat: {
    includeTransactions: {
      eventFormat: {
        filtersByParty: {
          // Copies of one filter: the same read, but a query of its own (no shared call).
          [party]: {
            cumulative: Array.from({ length: copies }, () => ({
              identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } },
            })),
          },
        },
      },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  },
});

/**
 * Found from outside (docs/security.md, "Tried from outside"): forged tokens naming a user take
 * that user's shares of the stream budget, where the gateway does not verify tokens.
 *
 * The attack: the gateway leaves token checks to the ledger (auth.mode none, the default), which
 * verifies signatures. The budget has 3 slots for subscriptions, 3 a user
 * (limits.ledger-streams-per-user). Bob's three open streams hold every slot. An attacker who
 * knows alice's user id, and no key, sends three list twins on tokens it signed itself naming
 * alice. Then alice asks for her own updates.
 *
 * The fixed gateway: the second half of a user's share goes only to tokens the ledger accepted.
 * A forged request may take the first half (1 of 3) and wait; the others are asked about and
 * answered 401 at once, charged to nobody; alice's request, her token accepted, waits for a slot,
 * as anyone's would, and gets her Iou once one of bob's streams ends (and a forged one that
 * waited before her got its slot and its 401).
 *
 * On 054621d it fails: the forged requests are charged to alice and wait in the budget's queue,
 * taking her share, and her own request is refused at once with 429 MAXIMUM_NUMBER_OF_STREAMS
 * naming limits.ledger-streams-per-user (the forged ones get their 401 only once a slot frees).
 *
 * A second outside attack, on the fix: three more forged tokens name nobody (no `sub`), each
 * with an issuer of its own. On a94d5a8 they were charged at once, each to a user of its own
 * (its issuer, no subject), and filled the queue (3 here): alice's request was refused with 429
 * `queue-full`. Tokens that name no user now share one share.
 *
 * A third, on the half of a share charged unasked (2983540): three forged tokens of users made
 * up, each under half its own share, were charged unasked and, with the others, filled the queue:
 * alice's request was refused 429 `queue-full`. Claims nobody judged now hold at most half the
 * budget's slots together (1 of 3 here): one forged request waits, the eight others are asked
 * about and refused at once.
 */
describe("fail closed: forged tokens naming a user do not take that user's shares (the gateway not verifying tokens)", () => {
  let stack: Stack;
  let alice: string;
  let bob: string;
  let aliceIou: string;
  const opened: WatchedSocket[] = [];

  before(async () => {
    stack = await startStack(
      [
        ...["--limits.ledger-streams", "4", "--limits.ledger-streams-per-user", "3"],
        ...["--limits.ledger-streams-queue", "3", "--limits.ledger-streams-queue-timeout", "20s"],
        // Each stream's own call admits it: no re-check probes beside the streams counted.
        ...["--websocket-config.stream-authorization-recheck-interval", "0s"],
      ],
      {},
      { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
    );
    const party = async (hint: string) => {
      const reply = await call<{ partyDetails: { party: string } }>(
        stack,
        "POST",
        "/v2/parties",
        { partyIdHint: hint },
        admin(),
      );
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body.partyDetails.party;
    };
    alice = await party("alice");
    bob = await party("bob");
    for (const [id, kind, of] of [
      ["alice-reader", "CanReadAs", alice],
      ["alice-writer", "CanActAs", alice],
      ["bob-reader", "CanReadAs", bob],
    ] as const) {
      const rights = [{ kind: { [kind]: { value: { party: of } } } }];
      const created = await call(stack, "POST", "/v2/users", { user: { id }, rights }, admin());
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    const iou = { issuer: alice, owner: alice, currency: "EUR", amount: "100" };
    const created = await createIouTransaction(stack, signed("alice-writer"), "forged-shares-iou", iou);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    aliceIou = created.body.transaction.events[0].CreatedEvent.contractId as string;
  });
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  it("answers the forged requests 401 at once and keeps alice's share for her", {
    timeout: 60_000,
  }, async () => {
    // Bob's streams take the subscriptions' three slots; a fourth is past his share.
    const bobs = [1, 2, 3, 4].map((copies) =>
      watchedSocket(stack.url, signed("bob-reader"), updatesOf(bob, undefined, copies)),
    );
    opened.push(...bobs);
    const isError = (frame: Frame) => typeof frame.code === "string";
    await until(() => bobs.some((socket) => socket.frames.some(isError)), { budgetMs: 10_000 });
    const holding = bobs.filter((socket) => !socket.frames.some(isError));
    assert.equal(holding.length, 3, "bob holds every subscription slot");

    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, admin()))
      .body.offset;
    const forgedAlice = signToken("alice-reader", { key: "the-attacker-signed-this" });
    const nobody = (n: number) =>
      signToken("", { key: "the-attacker-signed-this", issuer: `made-up-${n}`, extra: { sub: undefined } });
    const answeredAt: number[] = [];
    const madeUp = (n: number) => signToken(`made-up-${n}`, { key: "the-attacker-signed-this" });
    const tokens = [forgedAlice, forgedAlice, forgedAlice, nobody(1), nobody(2), nobody(3)];
    const forged = [...tokens, madeUp(1), madeUp(2), madeUp(3)].map((token) =>
      call(stack, "POST", "/v2/updates", updatesOf(alice, end), token).then((reply) => {
        answeredAt.push(Date.now());
        return reply;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const own = call<Frame[]>(stack, "POST", "/v2/updates", updatesOf(alice, end), signed("alice-reader"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A slot frees: alice's request, waiting like anyone's, takes it.
    const freedAt = Date.now();
    holding[0]?.close();
    const reply = await own;
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.ok(JSON.stringify(reply.body).includes(aliceIou), "alice's list twin holds her Iou");

    // Every forged request was refused by the ledger; all but the one that took the unjudged
    // half of the budget (1 of its 3 slots) before any slot was free.
    const statuses = (await Promise.all(forged)).map((r) => r.status);
    assert.deepEqual(statuses, Array(9).fill(401));
    assert.equal(answeredAt.filter((at) => at < freedAt).length, 8, "answered without waiting for a slot");
  });
  it("asks the ledger about a list twin's token once per request, not for each of its calls, nor past it", async () => {
    for (const socket of opened) socket.close();
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, admin()))
      .body.offset;
    // Alice's stream holds the first half of her share (1 of 3): her list twins' tokens are asked about.
    const stream = watchedSocket(stack.url, signed("alice-reader"), updatesOf(alice));
    opened.push(stream);
    await until(() => stream.elements().length > 0, { budgetMs: 10_000 });
    // Another of alice's tokens (another expiry): not the one her stream holds.
    const token = signToken("alice-reader", { key: SECRET, exp: Math.floor(Date.now() / 1000) + 200 });
    const asked = () => stack.sandbox.calls.started("VersionService/GetLedgerApiVersion");
    const reads = () => stack.sandbox.calls.started("UpdateService/GetUpdates");
    // Nothing after the end: the idle wait ends it empty, and the empty answer's verdict is a
    // probe of its own (a second call on the token).
    const request = { ...updatesOf(alice), beginExclusive: end };
    const listed = async () => {
      const [askedBefore, readsBefore] = [asked(), reads()];
      const reply = await call(stack, "POST", "/v2/updates?stream_idle_timeout_ms=100", request, token);
      return {
        status: reply.status,
        body: reply.body,
        asked: asked() - askedBefore,
        reads: reads() - readsBefore,
      };
    };
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await listed(), { status: 200, body: [], asked: 1, reads: 2 }, `request ${i + 1}`);
    }
  });
});
