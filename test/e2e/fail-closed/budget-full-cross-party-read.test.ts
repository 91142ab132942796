import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../../support/gateway-metric.js";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { aliceAndBob } from "./alice-and-bob.js";
import { type Frame, type WatchedSocket, watchedSocket } from "./watched-socket.js";

/**
 * How a fail-closed gateway may end the joiner: the ledger's refusal (PERMISSION_DENIED or
 * UNAUTHENTICATED, which Canton and the sandbox redact to code NA: the gRPC code tells), or the
 * budget's 429.
 */
const isRefusal = (frame: Frame | undefined) =>
  frame?.code === "MAXIMUM_NUMBER_OF_STREAMS" || [7, 16].includes(frame?.grpcCodeValue);

/**
 * Bob's own open-ended streams: one request each that no other shares (the fan-out keys a
 * request without its offset, so they differ in shape, not in where they start), each of which
 * sees bob's Iou once its call is open.
 */
const bobsOwnRequests = (bob: string) =>
  ["TRANSACTION_SHAPE_ACS_DELTA", "TRANSACTION_SHAPE_LEDGER_EFFECTS"].flatMap((transactionShape) =>
    [false, true].flatMap((verbose) =>
      [false, true].map((includeCreatedEventBlob) => ({
        beginExclusive: 0,
        updateFormat: {
          includeTransactions: {
            eventFormat: {
              filtersByParty: {
                [bob]: {
                  cumulative: [
                    { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob } } } },
                  ],
                },
              },
              verbose,
            },
            transactionShape,
          },
        },
      })),
    ),
  );

/**
 * Issue 35, attack 1: a cross-party read through the fan-out while the participant's stream
 * budget is full.
 *
 * The attack: bob, a user who may read only bob, fills `limits.ledger-streams` (3) with open-ended
 * streams of his own. Alice opens her updates from offset 0; her shared call waits in the budget's
 * queue. Bob opens the very same request. His admission probe waits in the queue too, and after a
 * second of silence it counts as admitted (the open-ended probe's settle timer runs while the probe
 * has not even been sent). Bob closes one of his streams: alice's call takes the slot, and bob gets
 * alice's Iou and everything after it.
 *
 * The fixed gateway: a probe that is queued or not yet answered is never a yes, and authorization
 * cannot be starved by the budget. Bob's socket for alice's request ends with an error frame (the
 * ledger's refusal, or 429 MAXIMUM_NUMBER_OF_STREAMS) and carries no element of alice's, before
 * or after the slot frees; the fan-out does not count him as admitted; alice gets her Iou.
 *
 * On 9c6ba21 it fails: bob's socket stays open, `ledger_gateway_fanout_admissions_total
 * {outcome="admitted"}` counts him, and he receives alice's Iou (witnessParties [alice]).
 */
describe("fail closed: a joiner whose admission probe waits in a full stream budget", () => {
  let stack: Stack;
  let alice: string;
  let bob: string;
  let aliceIou: string;
  let aliceReader: string;
  let bobReader: string;

  before(async () => {
    stack = await startStack([
      "--limits.ledger-streams",
      "3",
      // Bob alone fills the budget here, which his share per user would stop first (that defence
      // is budget-one-user.test.ts'): this test is of the probes in a full budget.
      "--limits.ledger-streams-per-user",
      "100",
      // Longer than the attack takes: alice's call must still be waiting when bob frees his slot.
      "--limits.ledger-streams-queue-timeout",
      "20s",
      // Admission is what is attacked: no re-checks to compete for the budget.
      "--websocket-config.stream-authorization-recheck-interval",
      "0s",
    ]);
    ({ alice, bob, aliceReader, bobReader, aliceIou } = await aliceAndBob(stack, { bobIou: true }));
  });
  const opened: WatchedSocket[] = [];
  const open = (token: string, query: unknown): WatchedSocket => {
    const socket = watchedSocket(stack.url, token, query);
    opened.push(socket);
    return socket;
  };
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  const queued = () => gatewayMetric(stack.url, "ledger_gateway_ledger_streams_queued");
  const admitted = () =>
    gatewayMetric(stack.url, "ledger_gateway_fanout_admissions_total", 'outcome="admitted"');
  /** Elements that show anything of alice's: her party or her Iou. */
  const alicesIn = (socket: WatchedSocket) =>
    socket.elements().filter((frame) => {
      const text = JSON.stringify(frame);
      return text.includes(alice) || text.includes(aliceIou);
    });

  it("never sends bob alice's Iou, ends his socket with a refusal, and does not count him admitted", {
    timeout: 120_000,
  }, async () => {
    // Bob's own streams until the budget lets no more open: the last one waits (or is refused).
    const own: WatchedSocket[] = [];
    for (const request of bobsOwnRequests(bob)) {
      const socket = open(bobReader, request);
      own.push(socket);
      await until(
        async () => socket.elements().length > 0 || socket.closedWith !== undefined || (await queued()) > 0,
        { observed: async () => `queued ${await queued()}, ${socket}` },
      );
      if (socket.elements().length === 0) break;
    }
    const unopened = own.pop();
    assert.ok(unopened !== undefined && unopened.elements().length === 0, "the budget never filled");
    assert.ok(own.length > 0, "bob holds no stream of his own");
    // The one that got no slot leaves: the budget is full, nobody waits.
    unopened.close();
    await unopened.closed;
    await until(async () => (await queued()) === 0, { observed: async () => `queued ${await queued()}` });

    // Alice's shared call waits for a slot.
    const alicesStream = open(aliceReader, sameRequest(alice));
    await until(async () => (await queued()) === 1, { observed: async () => `queued ${await queued()}` });

    // Bob asks for the very same request.
    const admittedBefore = await admitted();
    const attack = open(bobReader, sameRequest(alice));
    // Answered (or, on 9c6ba21, settled) within seconds. A gateway that holds his probe in the
    // queue instead answers 429 at its timeout: the slot frees meanwhile all the same.
    await until(async () => attack.closedWith !== undefined || (await admitted()) > admittedBefore, {
      budgetMs: 5_000,
    }).catch(() => undefined);

    // A slot frees: alice's call opens.
    own[0]?.close();
    await until(() => alicesIn(alicesStream).length > 0, { observed: () => `alice's ${alicesStream}` });
    await until(() => attack.closedWith !== undefined || alicesIn(attack).length > 0, {
      observed: () => `bob's ${attack}`,
    });

    const leaked = alicesIn(attack);
    assert.equal(
      leaked.length,
      0,
      `bob (may read only bob) received ${leaked.length} element(s) of alice's: ${JSON.stringify(leaked).slice(0, 1500)}`,
    );
    assert.equal(await admitted(), admittedBefore, "the fan-out counted bob as admitted to alice's stream");
    assert.ok(attack.closedWith !== undefined, `bob's socket for alice's request is still open: ${attack}`);
    assert.ok(isRefusal(attack.frames.at(-1)), `bob's socket ended without a refusal: ${attack}`);
  });
});

/** Alice's updates from offset 0, open-ended: the request bob copies. */
function sameRequest(party: string) {
  return {
    beginExclusive: 0,
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: {
            [party]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] },
          },
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
}
