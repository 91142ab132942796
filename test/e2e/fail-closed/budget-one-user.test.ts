import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { call } from "../ledger-client.js";
import { aliceAndBob } from "./alice-and-bob.js";
import { type Frame, type WatchedSocket, watchedSocket } from "./watched-socket.js";

/**
 * Bob's open-ended update stream whose filter holds `copies` copies of one WildcardFilter: the
 * ledger reads them all as one query, but each is a request of its own to the fan-out, so each
 * takes a ledger call (and a slot of the stream budget) of its own.
 */
const duplicatedFilter = (bob: string, copies: number) => ({
  beginExclusive: 0,
  updateFormat: {
    includeTransactions: {
      eventFormat: {
        filtersByParty: {
          [bob]: {
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

const aliceUpdates = (alice: string, endInclusive?: number) => ({
  beginExclusive: 0,
  ...(endInclusive === undefined ? {} : { endInclusive }),
  updateFormat: {
    includeTransactions: {
      eventFormat: { filtersByParty: { [alice]: {} } },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  },
});

const isError = (frame: Frame) => typeof frame.code === "string";

/**
 * Black-box finding (wave 4): one ordinary user takes the whole ledger stream budget.
 *
 * The attack: bob opens more open-ended streams than the subscriptions' share of
 * `limits.ledger-streams` (here 6: 5 for subscriptions, 1 kept for authorization calls), each a
 * query of his own party that differs only in how many copies of one WildcardFilter its
 * `cumulative` list holds, so that none shares a ledger call. Then alice asks for her own updates.
 *
 * The fixed gateway: bob holds at most his share (limits.ledger-streams-per-user, 50% by default:
 * 3 of 5), held and waiting together; his streams past it end at once with 429
 * MAXIMUM_NUMBER_OF_STREAMS naming that key; alice's list twin and WebSocket get her Iou at once.
 *
 * On main (6cc3c78) it fails: bob's first five streams hold every subscription slot and the rest
 * wait in the queue (no error frame), and alice's list twin waits behind them until the queue's
 * timeout answers it 429 MAXIMUM_NUMBER_OF_STREAMS.
 */
describe("fail closed: one user cannot take the ledger stream budget", () => {
  let stack: Stack;
  let alice: string;
  let bob: string;
  let aliceIou: string;
  let aliceReader: string;
  let bobReader: string;

  before(async () => {
    stack = await startStack([
      "--limits.ledger-streams",
      "6",
      // Short, so that the old gateway's refusal of alice comes within the test's seconds.
      "--limits.ledger-streams-queue-timeout",
      "3s",
      // Admission by each stream's own call: no re-check probes beside the streams counted.
      "--websocket-config.stream-authorization-recheck-interval",
      "0s",
    ]);
    ({ alice, bob, aliceReader, bobReader, aliceIou } = await aliceAndBob(stack));
  });
  const opened: WatchedSocket[] = [];
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  it("holds bob to his share, refusing the rest at once with 429 naming limits.ledger-streams-per-user, and serves alice at once", async () => {
    const bobs = Array.from({ length: 8 }, (_, i) =>
      watchedSocket(stack.url, bobReader, duplicatedFilter(bob, i + 1)),
    );
    opened.push(...bobs);
    const refused = () => bobs.filter((socket) => socket.frames.some(isError));
    // The share is 3 of the 5 subscription slots: the other 5 streams are refused, none waits.
    await until(() => refused().length >= 5, { budgetMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(refused().length, 5, "bob keeps 3 streams, no more");
    for (const socket of refused()) {
      const error = socket.frames.find(isError) as Frame;
      assert.equal(error.code, "MAXIMUM_NUMBER_OF_STREAMS");
      assert.equal(error.context?.limit, "limits.ledger-streams-per-user", JSON.stringify(error));
      assert.match(error.cause, /limits\.ledger-streams-per-user/);
    }

    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, aliceReader))
      .body.offset;
    const list = await call<Frame[]>(stack, "POST", "/v2/updates", aliceUpdates(alice, end), aliceReader);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.ok(JSON.stringify(list.body).includes(aliceIou), "alice's list twin holds her Iou");

    const socket = watchedSocket(stack.url, aliceReader, aliceUpdates(alice));
    opened.push(socket);
    await until(() => socket.frames.length > 0, { budgetMs: 5_000 });
    assert.ok(!isError(socket.frames[0] as Frame), JSON.stringify(socket.frames[0]));
    assert.ok(JSON.stringify(socket.frames).includes(aliceIou), "alice's WebSocket gets her Iou");
  });
});
