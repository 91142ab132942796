import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../../support/gateway-metric.js";
import { type Stack, startStack } from "../../support/stack.js";
import { tokenFor } from "../../support/tokens.js";
import { until } from "../../support/until.js";
import { partyFilter, updatesRequest } from "../../support/update-requests.js";
import { allocate, call, createIouTransaction, type Reply, userFor } from "../ledger-client.js";
import { type WatchedSocket, watchedSocket } from "./watched-socket.js";

const FRAMES = 2_000;
/** What the fix allows 2,000 renewal frames to cost the ledger (issue 35, "Done when"). */
const MOST_LEDGER_CALLS = 50;
const GET_UPDATES = "UpdateService/GetUpdates";

/**
 * Issue 35, attack 3: renewal frames are unthrottled ledger calls.
 *
 * The attack: a client with one valid token sends 2,000 renewal frames (`{"token": ...}`, the
 * same token each time) on one /v2/updates socket. Each is judged by a probe of its own on the
 * ledger and, accepted, moves the stream's call onto it: about 2,300 GetUpdates calls in a few
 * seconds, the open ledger streams reach the whole default budget (500), and another user's
 * request gets 429.
 *
 * The fixed gateway: at most one renewal admission per socket in flight (newer frames replace
 * the waiting one), and a per-socket rate that refuses a flood with error frames, not ledger
 * calls. The 2,000 frames cost the ledger at most 50 GetUpdates calls (counted where they arrive:
 * the sandbox), and another user's list of updates made during the flood is served (200).
 *
 * On 9c6ba21 it fails on the count: every frame is a probe and most a reopened call.
 */
describe("fail closed: a flood of renewal frames on one socket", () => {
  let stack: Stack;
  let party: string;
  let renewer: string;
  let bystander: string;
  const opened: WatchedSocket[] = [];

  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "flood");
    const writer = await userFor(stack, "flood-writer", [party]);
    renewer = await userFor(stack, "flood-renewer", [], [party]);
    bystander = await userFor(stack, "bystander", [], [party]);
    const created = await createIouTransaction(stack, writer, "flood-iou", {
      issuer: party,
      owner: party,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
  });
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  const streamsOpen = () => gatewayMetric(stack.url, "ledger_gateway_ledger_streams_open");
  const streamsQueued = () => gatewayMetric(stack.url, "ledger_gateway_ledger_streams_queued");
  const budgetRefusals = () => gatewayMetric(stack.url, "ledger_gateway_ledger_streams_refused_total");

  it("costs the ledger at most 50 calls for 2,000 renewal frames, and serves another user's stream meanwhile", {
    timeout: 180_000,
  }, async (t) => {
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    const stream = watchedSocket(stack.url, renewer, updatesRequest(partyFilter(party), 0));
    opened.push(stream);
    await until(() => stream.elements().length > 0, { observed: () => `${stream}` });
    const openBefore = await streamsOpen();
    const callsBefore = stack.sandbox.calls.started(GET_UPDATES);
    const refusalsBefore = await budgetRefusals();

    // Another valid token of the same user, the same one in every frame.
    const renewal = JSON.stringify({ token: tokenFor("flood-renewer", { jti: "renewal" }) });
    for (let i = 0; i < FRAMES; i++) stream.send(renewal);
    // Another user lists the party's active contracts (a ledger stream too, of another method than
    // the flood's) while the gateway reads the flood, and again after it.
    const bystanders: Promise<Reply>[] = [];
    const acs = { activeAtOffset: end, eventFormat: partyFilter(party) };
    const list = () => bystanders.push(call(stack, "POST", "/v2/state/active-contracts", acs, bystander));
    list();
    // Answered once the gateway has read every frame before it.
    await stream.ping();
    for (let i = 0; i < 5; i++) {
      list();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const statuses = (await Promise.all(bystanders)).map((reply) => reply.status);

    // The flood's calls end by themselves (each probe is an empty range): wait for the budget to be back.
    await until(async () => (await streamsQueued()) === 0 && (await streamsOpen()) <= openBefore, {
      observed: async () =>
        `open ${await streamsOpen()} (before ${openBefore}), queued ${await streamsQueued()}`,
    });
    const calls = stack.sandbox.calls.started(GET_UPDATES) - callsBefore;
    const refusals = (await budgetRefusals()) - refusalsBefore;
    t.diagnostic(
      `${FRAMES} renewal frames: ${calls} GetUpdates calls on the ledger, ${refusals} budget refusals`,
    );

    assert.ok(
      calls <= MOST_LEDGER_CALLS,
      `${FRAMES} renewal frames caused ${calls} GetUpdates calls on the ledger (at most ${MOST_LEDGER_CALLS}); another user's lists meanwhile: ${statuses}; ledger streams refused by the full budget: ${refusals}`,
    );
    // What the budget refuses, anyone's request may be: the flood must not get that far.
    assert.equal(refusals, 0, "ledger streams refused by the budget during the flood");
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200], "another user's lists during the flood");
  });
});
