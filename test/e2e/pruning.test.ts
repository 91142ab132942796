import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { serviceClient } from "../sandbox/sandbox-client.js";
import { type Stack, startStack } from "../support/stack.js";
import { assertCantonShape } from "./canton-shapes.js";
import { allocate, call, createIouTransaction, userFor, wildcard, wsStream } from "./ledger-client.js";
import { openStream } from "./open-stream.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON answers loosely
type Json = Record<string, any>;

/**
 * Pruning through the gateway. The JSON API has no prune endpoint: the operator prunes over the
 * participant's admin gRPC (ParticipantPruningService.Prune), as Canton's own tests do.
 */
describe("pruned history through the gateway", () => {
  let stack: Stack;
  let bank: string;
  let bankToken: string;
  let prunedAt: number;

  const create = async (commandId: string) => {
    const reply = await createIouTransaction(stack, bankToken, commandId, {
      issuer: bank,
      owner: bank,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.transaction as Json;
  };
  const updates = (beginExclusive: number, extra: Json = {}) => ({
    beginExclusive,
    updateFormat: {
      includeTransactions: { eventFormat: wildcard([bank]), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
    },
    ...extra,
  });
  const assertPrunedError = (error: Json, begin: number) => {
    assertCantonShape("JsCantonError", error);
    assert.equal(error.code, "PARTICIPANT_PRUNED_DATA_ACCESSED", JSON.stringify(error));
    assert.equal(error.context.earliest_offset, String(prunedAt));
    assert.match(
      error.cause,
      new RegExp(`Updates request from ${begin + 1} to \\d+ precedes pruned offset ${prunedAt}`),
    );
  };

  before(async () => {
    stack = await startStack();
    bank = await allocate(stack, "bank");
    bankToken = await userFor(stack, "bank-user", [bank]);
    await create("prune-1");
    prunedAt = (await create("prune-2")).offset;
    await create("prune-3");
    const pruning = serviceClient(
      stack.sandboxPort,
      "com.daml.ledger.api.v2.admin.ParticipantPruningService",
    );
    await pruning.Prune!({ pruneUpTo: String(prunedAt) }).finally(() => pruning.close());
  });
  after(() => stack.stop());

  it("reports the pruned offset", async () => {
    const reply = await call<Json>(stack, "GET", "/v2/state/latest-pruned-offsets");
    assertCantonShape("GetLatestPrunedOffsetsResponse", reply.body);
    assert.deepEqual(reply.body, {
      participantPrunedUpToInclusive: prunedAt,
      allDivulgedContractsPrunedUpToInclusive: prunedAt,
    });
  });

  it("answers a read below the pruning point with Canton's error (list twin and WebSocket), one from it with the updates", async () => {
    const listed = await call<Json>(stack, "POST", "/v2/updates", updates(prunedAt - 1), bankToken);
    assert.equal(listed.status, 400, JSON.stringify(listed.body));
    assertPrunedError(listed.body, prunedAt - 1);

    const ws = await wsStream(stack, "/v2/updates", updates(prunedAt - 1), bankToken);
    assert.equal(ws.frames.length, 1, JSON.stringify(ws.frames));
    assertPrunedError(ws.frames[0] as Json, prunedAt - 1);

    const end = (await call<Json>(stack, "GET", "/v2/state/ledger-end")).body.offset as number;
    const from = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates",
      updates(prunedAt, { endInclusive: end }),
      bankToken,
    );
    assert.equal(from.status, 200, JSON.stringify(from.body));
    assert.deepEqual(
      from.body.map((f) => f.update.Transaction.value.offset),
      [end],
    );

    const acs = await call<Json[]>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { activeAtOffset: end, eventFormat: wildcard([bank]) },
      bankToken,
    );
    assert.equal(acs.body.length, 3, "every contract is still active, the pruned ones' creates too");
    const oldAcs = await call<Json>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { activeAtOffset: prunedAt - 1, eventFormat: wildcard([bank]) },
      bankToken,
    );
    assert.equal(oldAcs.status, 400, JSON.stringify(oldAcs.body));
    assert.equal(oldAcs.body.code, "PARTICIPANT_PRUNED_DATA_ACCESSED");
    assert.match(
      oldAcs.body.cause,
      new RegExp(`Active contracts request at offset ${prunedAt - 1} precedes pruned offset ${prunedAt}`),
    );

    const completions = await wsStream(
      stack,
      "/v2/commands/completions",
      { userId: "bank-user", parties: [bank], beginExclusive: prunedAt - 1 },
      bankToken,
    );
    assert.equal(completions.frames.length, 1, JSON.stringify(completions.frames));
    const refused = completions.frames[0] as Json;
    assertCantonShape("JsCantonError", refused);
    assert.equal(refused.code, "PARTICIPANT_PRUNED_DATA_ACCESSED");
    assert.match(
      refused.cause,
      new RegExp(
        `Command completions request from ${prunedAt} to \\d+ overlaps with pruned offset ${prunedAt}`,
      ),
    );
  });

  it("gives the pruned-offset error to the subscriber that asked for it, not to the shared stream it would join", async () => {
    const shared = await openStream(stack, "/v2/updates", updates(prunedAt), bankToken);
    await shared.waitFor((frames) => frames.some((f) => f.update?.Transaction));
    // Same request, earlier offset: it would join the shared stream after its admission probe.
    const late = await openStream(stack, "/v2/updates", updates(prunedAt - 1), bankToken);
    const refused = await late.waitFor((frames) => frames.some((f) => f.code !== undefined));
    assertPrunedError(refused.find((f) => f.code !== undefined)!, prunedAt - 1);
    late.close();
    const next = await create("prune-after");
    const frames = await shared.waitFor((all) =>
      all.some((f) => f.update?.Transaction?.value.offset === next.offset),
    );
    shared.close();
    assert.equal(
      frames.some((f) => f.code !== undefined),
      false,
      "the shared stream's subscriber goes on",
    );
  });

  // Last: it prunes further. Found from outside: a joiner with the running subscriber's token,
  // request and offset was admitted with that subscriber's yes, a re-check's asked from where
  // its stream stood, and replayed the pruned updates from the shared stream's history.
  it("gives a joiner from an offset pruned since the running subscriber's start the pruned-offset error, on the same token", async () => {
    const from = (await create("reprune-from")).offset as number;
    const running = await openStream(stack, "/v2/updates", updates(from), bankToken);
    const created: Json[] = [];
    for (let i = 0; i < 4; i += 1) created.push(await create(`reprune-${i}`));
    await running.waitFor((frames) =>
      frames.some((f) => f.update?.Transaction?.value.offset === created.at(-1)?.offset),
    );
    const repruned = created[1]?.offset as number;
    const pruning = serviceClient(
      stack.sandboxPort,
      "com.daml.ledger.api.v2.admin.ParticipantPruningService",
    );
    await pruning.Prune!({ pruneUpTo: String(repruned) }).finally(() => pruning.close());
    // Past a re-check of the running subscriber (the stack's interval: 5 s), whose yes was the one shared.
    await new Promise((resolve) => setTimeout(resolve, 5_500));

    const joiner = await openStream(stack, "/v2/updates", updates(from), bankToken);
    const frames = await joiner.waitFor((all) => all.length > 0);
    joiner.close();
    running.close();
    assert.equal(frames[0]?.code, "PARTICIPANT_PRUNED_DATA_ACCESSED", JSON.stringify(frames[0]));
    assert.equal(
      frames.some((f) => f.update !== undefined),
      false,
      `the joiner was sent pruned updates: ${JSON.stringify(frames.map((f) => f.update?.Transaction?.value.offset ?? f.code))}`,
    );
  });
});
