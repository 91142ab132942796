import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../../support/gateway-metric.js";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { allocate, call, iouCommitter, userFor } from "../ledger-client.js";
import { type Frame, updateIds, type WatchedSocket, watchedSocket } from "./watched-socket.js";

const RECHECK_MS = 1_000;
/** Room for a loaded machine on top of Canton's staleness bound (twice the re-check interval). */
const SLACK_MS = 5_000;
/** How a subscriber whose right is gone is ended: Canton's code, or the ledger's refusal (redacted: the gRPC code tells). */
const isStale = (frame: Frame | undefined) =>
  frame?.code === "STALE_STREAM_AUTHORIZATION" || frame?.grpcCodeValue === 7;

const readAs = (party: string) => ({ kind: { CanReadAs: { value: { party } } } });

/** An open-ended request for `party`'s transactions after `beginExclusive`, in one of several shapes. */
function updatesOf(party: string, beginExclusive: number, shape: { verbose?: boolean; blob?: boolean } = {}) {
  return {
    beginExclusive,
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: {
            [party]: {
              cumulative: [
                {
                  identifierFilter: {
                    WildcardFilter: {
                      value: shape.blob === undefined ? {} : { includeCreatedEventBlob: shape.blob },
                    },
                  },
                },
              ],
            },
          },
          ...(shape.verbose === undefined ? {} : { verbose: shape.verbose }),
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
}

/**
 * Issue 35, attack 2: re-checks fail open when the stream budget is full.
 *
 * The attack: carol (CanReadAs alice) joins alice's shared update stream, then fills the rest of
 * `limits.ledger-streams` with open-ended streams of her own, and her right is revoked. Her
 * re-checks wait in the budget's queue and time out with MAXIMUM_NUMBER_OF_STREAMS, which the
 * gateway does not take as a refusal: she keeps reading alice's transactions.
 *
 * The fixed gateway: re-checks cannot be starved by subscriptions, and a subscriber whose
 * confirmation is older than twice the re-check interval is ended (Canton's
 * UserBasedOngoingAuthorization: STALE_STREAM_AUTHORIZATION). Carol's socket gets that error
 * frame (or PERMISSION_DENIED) and closes within twice the interval plus slack; nothing alice
 * commits after that reaches her; alice's own stream goes on.
 *
 * On 9c6ba21 it fails: carol's socket stays open and receives every transaction alice commits
 * after the revocation.
 */
describe("fail closed: re-checks of a subscriber who filled the stream budget", () => {
  let stack: Stack;
  let alice: string;
  let writer: string;
  let aliceReader: string;
  let carol: string;

  before(async () => {
    stack = await startStack([
      "--limits.ledger-streams",
      "3",
      "--websocket-config.stream-authorization-recheck-interval",
      `${RECHECK_MS}ms`,
      // Probes left waiting when the stack stops would otherwise retry the lost ledger for 30 s.
      "--websocket-config.resume-window",
      "0s",
    ]);
    alice = await allocate(stack, "alice");
    writer = await userFor(stack, "alice-writer", [alice]);
    aliceReader = await userFor(stack, "alice-reader", [], [alice]);
    carol = await userFor(stack, "carol", [], [alice]);
    await commit("before");
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

  /** One Iou of alice's: its update id, and when it was asked for. */
  const commit = iouCommitter(
    () => stack,
    () => writer,
    () => alice,
    "recheck",
  );
  const ledgerEnd = async () =>
    (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
  const queued = () => gatewayMetric(stack.url, "ledger_gateway_ledger_streams_queued");

  it("ends carol's membership of alice's stream once her right is revoked, while alice reads on", {
    timeout: 120_000,
  }, async () => {
    const live = updatesOf(alice, await ledgerEnd());
    const alicesStream = open(aliceReader, live);
    const carols = open(carol, live);
    const first = await commit("shared");
    await until(() => updateIds(alicesStream).includes(first.updateId), {
      observed: () => `${alicesStream}`,
    });
    await until(() => updateIds(carols).includes(first.updateId), { observed: () => `${carols}` });

    // Carol's own streams (alice's updates from 0, each shaped apart: no two share a call) until
    // the budget lets no more open; the one left waiting leaves.
    const own: WatchedSocket[] = [];
    const shapes = [false, true].flatMap((verbose) => [false, true].map((blob) => ({ verbose, blob })));
    for (const shape of shapes) {
      const socket = open(carol, updatesOf(alice, 0, shape));
      own.push(socket);
      await until(
        async () => socket.elements().length > 0 || socket.closedWith !== undefined || (await queued()) > 0,
        { observed: async () => `queued ${await queued()}, ${socket}` },
      );
      if (socket.elements().length === 0) break;
    }
    const unopened = own.pop();
    assert.ok(unopened !== undefined && unopened.elements().length === 0, "the budget never filled");
    unopened.close();
    await unopened.closed;
    await until(async () => (await queued()) === 0, { observed: async () => `queued ${await queued()}` });

    const revoke = await call(stack, "PATCH", "/v2/users/carol/rights", {
      userId: "carol",
      rights: [readAs(alice)],
    });
    assert.equal(revoke.status, 200, JSON.stringify(revoke.body));
    const deadline = Date.now() + 2 * RECHECK_MS + SLACK_MS;

    // Alice goes on committing, past the deadline, while carol's socket is watched.
    const later: { updateId: string; at: number }[] = [];
    while (carols.closedWith === undefined && Date.now() < deadline + 3_000) {
      later.push(await commit("after"));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const last = later.at(-1) ?? (await commit("after"));
    await until(() => updateIds(alicesStream).includes(last.updateId), { observed: () => `${alicesStream}` });

    const leaked = later.filter((tx) => tx.at > deadline && updateIds(carols).includes(tx.updateId));
    assert.equal(
      leaked.length,
      0,
      `carol, revoked, received ${leaked.length} transaction(s) alice committed more than ${2 * RECHECK_MS + SLACK_MS} ms after the revocation (socket ${carols.closedWith === undefined ? "still open" : `closed ${carols.closedWith}`}, ${updateIds(carols).length} elements in all)`,
    );
    assert.ok(carols.closedWith !== undefined, `carol's socket is still open: ${carols}`);
    assert.ok(isStale(carols.frames.at(-1)), `carol's last frame: ${carols}`);
    assert.equal(alicesStream.closedWith, undefined, `alice's stream ended: ${alicesStream}`);
    assert.ok(
      later.every((tx) => updateIds(alicesStream).includes(tx.updateId)),
      `alice missed transactions: ${alicesStream}`,
    );
  });
});
