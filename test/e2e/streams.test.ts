import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import {
  ASSET,
  allocate,
  call,
  createIouTransaction,
  IOU,
  userFor,
  wildcard,
  wsStream,
} from "./ledger-client.js";

type Json = Record<string, any>;

describe("update, ACS and completion streams through the gateway", () => {
  let stack: Stack;
  let bank: string;
  let alice: string;
  let bankToken: string;
  let aliceToken: string;
  let readerToken: string;
  let end: number;
  const contractIds: string[] = [];

  const submit = async (commandId: string, amount: string) => {
    const reply = await createIouTransaction(stack, bankToken, commandId, {
      issuer: bank,
      owner: alice,
      currency: "EUR",
      amount,
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.transaction as Json;
  };
  const ledgerEnd = async () =>
    (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, aliceToken)).body.offset;
  const transactions = (elements: Json[]) =>
    elements.map((e) => e.update.Transaction?.value).filter((t) => t !== undefined);

  before(async () => {
    stack = await startStack(["--websocket-config.http-list-wait-time", "300ms"]);
    bank = await allocate(stack, "bank");
    alice = await allocate(stack, "alice");
    bankToken = await userFor(stack, "bank-user", [bank]);
    aliceToken = await userFor(stack, "alice-user", [alice]);
    await call(stack, "POST", "/v2/users", {
      user: { id: "super-reader" },
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    readerToken = tokenFor("super-reader");
    for (const [i, amount] of ["1", "2", "3"].entries()) {
      contractIds.push((await submit(`stream-setup-${i}`, amount)).events[0].CreatedEvent.contractId);
    }
    end = await ledgerEnd();
  });
  after(() => stack.stop());

  const updatesRequest = (shape: string, eventFormat: Json, extra: Json = {}) => ({
    beginExclusive: 0,
    endInclusive: end,
    updateFormat: { includeTransactions: { eventFormat, transactionShape: shape } },
    ...extra,
  });

  it("lists updates in ACS-delta shape for a party (list twin, bounded)", async () => {
    const reply = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates",
      updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])),
      aliceToken,
    );
    assert.equal(reply.status, 200);
    const txs = transactions(reply.body);
    assert.equal(txs.length, 3);
    assert.deepEqual(
      txs.map((t) => t.events[0].CreatedEvent.createArgument.amount),
      ["1.0000000000", "2.0000000000", "3.0000000000"],
    );
    assert.ok(
      txs.every((t, i) => i === 0 || t.offset > txs[i - 1].offset),
      "offsets ascend",
    );
  });

  it("serves the same elements over the WebSocket, then closes normally", async () => {
    const request = updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice]));
    const list = await call<Json[]>(stack, "POST", "/v2/updates", request, aliceToken);
    const ws = await wsStream(stack, "/v2/updates", request, aliceToken);
    assert.equal(ws.code, 1000);
    assert.deepEqual(ws.frames, list.body);
  });

  it("lists ledger effects with template and interface filters, views and blobs", async () => {
    const eventFormat = {
      filtersByParty: {
        [alice]: {
          cumulative: [
            {
              identifierFilter: {
                TemplateFilter: { value: { templateId: IOU, includeCreatedEventBlob: true } },
              },
            },
            {
              identifierFilter: {
                InterfaceFilter: { value: { interfaceId: ASSET, includeInterfaceView: true } },
              },
            },
          ],
        },
      },
    };
    const reply = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates",
      updatesRequest("TRANSACTION_SHAPE_LEDGER_EFFECTS", eventFormat),
      aliceToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const created = transactions(reply.body)[0].events[0].CreatedEvent;
    assert.ok(created.createdEventBlob.length > 0, "the blob was asked for");
    assert.equal(created.interfaceViews.length, 1);
    assert.equal(created.interfaceViews[0].viewValue.owner, alice);
    assert.equal(typeof created.interfaceViews[0].viewValue.description, "string");
  });

  it("lists for any party with a super-reader", async () => {
    const reply = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates",
      updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", { filtersForAnyParty: { cumulative: [] } }),
      readerToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(transactions(reply.body).length, 3);
  });

  it("accepts the deprecated filter + verbose form and refuses mixing it with updateFormat", async () => {
    const legacy = {
      beginExclusive: 0,
      endInclusive: end,
      filter: { filtersByParty: { [alice]: {} } },
      verbose: true,
    };
    const flats = await call<Json[]>(stack, "POST", "/v2/updates/flats", legacy, aliceToken);
    assert.equal(flats.status, 200);
    assert.equal(transactions(flats.body).length, 3);
    const mixed = await call<Json>(
      stack,
      "POST",
      "/v2/updates",
      {
        ...legacy,
        updateFormat: updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat,
      },
      aliceToken,
    );
    assert.equal(mixed.status, 400);
    assert.match(mixed.body.cause, /Both update_format and filter are set/);
  });

  it("serves transaction trees on /v2/updates/trees", async () => {
    const reply = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates/trees",
      { beginExclusive: 0, endInclusive: end, filter: { filtersByParty: { [alice]: {} } } },
      aliceToken,
    );
    assert.equal(reply.status, 200);
    const trees = reply.body.map((e) => e.update.TransactionTree?.value).filter(Boolean);
    assert.equal(trees.length, 3);
    assert.ok(trees[0].eventsById["0"].CreatedTreeEvent.value.createArgument);
  });

  it("follows an open-ended WebSocket stream as new transactions commit", async () => {
    const request = {
      beginExclusive: end,
      updateFormat: updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat,
    };
    const openBefore = stack.sandbox.calls.open("UpdateService/GetUpdates");
    const streamed = wsStream(stack, "/v2/updates", request, aliceToken, 1);
    // The stream's ledger call is open before the command is submitted: the new transaction arrives live.
    await until(() => stack.sandbox.calls.open("UpdateService/GetUpdates") > openBefore);
    const tx = await submit("live-1", "9");
    const { frames } = await streamed;
    assert.equal((frames[0] as Json | undefined)?.update?.Transaction?.value?.updateId, tx.updateId);
  });

  it("answers an open-ended list twin after the idle wait with what it has", async () => {
    const request = {
      beginExclusive: 0,
      updateFormat: updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat,
    };
    const reply = await call<Json[]>(stack, "POST", "/v2/updates", request, aliceToken);
    assert.equal(reply.status, 200);
    assert.ok(transactions(reply.body).length >= 3);
  });

  it("sends an error frame and closes when the ledger refuses the stream", async () => {
    const request = {
      beginExclusive: end + 1000,
      updateFormat: updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat,
    };
    const { frames, code } = await wsStream(stack, "/v2/updates", request, aliceToken);
    assert.equal(frames.length, 1);
    assert.equal(typeof frames[0]?.code, "string");
    assert.equal(typeof frames[0]?.errorCategory, "number");
    assert.equal(code, 1000);
  });

  it("sends an error frame for a malformed query frame", async () => {
    const { frames } = await wsStream(stack, "/v2/updates", { beginExclusive: "soon" }, aliceToken);
    assert.equal(frames.length, 1);
    assert.equal(frames[0]?.code, "INVALID_ARGUMENT");
    assert.match(String(frames[0]?.cause), /Invalid value for: body/);
  });

  it("streams completions over the WebSocket", async () => {
    const { frames } = await wsStream(
      stack,
      "/v2/commands/completions",
      { userId: "bank-user", parties: [bank], beginExclusive: 0 },
      bankToken,
      3,
    );
    // Frames already on the way when the client closes may still arrive: look at the first three.
    const commandIds = frames
      .slice(0, 3)
      .map((f) => (f as Json).completionResponse.Completion?.value.commandId);
    assert.deepEqual(commandIds, ["stream-setup-0", "stream-setup-1", "stream-setup-2"]);
  });

  it("refuses a WebSocket without a token with a plain HTTP 401", async () => {
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`);
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => resolve(101));
      socket.on("error", () => undefined);
    });
    assert.equal(status, 401);
  });

  it("streams the active contracts over both transports, with continuation tokens", async () => {
    const request = { activeAtOffset: end, eventFormat: wildcard([alice]) };
    const list = await call<Json[]>(stack, "POST", "/v2/state/active-contracts", request, aliceToken);
    assert.equal(list.status, 200);
    const ids = list.body.map((e) => e.contractEntry.JsActiveContract.createdEvent.contractId);
    assert.deepEqual([...ids].sort(), [...contractIds].sort());
    const ws = await wsStream(stack, "/v2/state/active-contracts", request, aliceToken);
    assert.deepEqual(ws.frames, list.body);
    const token = (list.body[0] as Json).streamContinuationToken;
    const rest = await call<Json[]>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { ...request, streamContinuationToken: token },
      aliceToken,
    );
    assert.deepEqual(
      rest.body.map((e) => e.contractEntry.JsActiveContract.createdEvent.contractId),
      ids.slice(1),
    );
  });

  it("accepts the deprecated ACS filter form", async () => {
    const reply = await call<Json[]>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { activeAtOffset: end, filter: { filtersByParty: { [alice]: {} } }, verbose: false },
      aliceToken,
    );
    assert.equal(reply.status, 200);
    assert.equal(reply.body.length, 3);
  });

  it("pages the active contracts (GET with a body, and POST)", async () => {
    for (const method of ["GET", "POST"]) {
      const first = await call<Json>(
        stack,
        method,
        "/v2/state/active-contracts-page",
        { activeAtOffset: end, eventFormat: wildcard([alice]), maxPageSize: 2 },
        aliceToken,
      );
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.activeContracts.length, 2);
      assert.equal(first.body.activeAtOffset, end);
      const second = await call<Json>(
        stack,
        method,
        "/v2/state/active-contracts-page",
        {
          activeAtOffset: end,
          eventFormat: wildcard([alice]),
          maxPageSize: 2,
          pageToken: first.body.nextPageToken,
        },
        aliceToken,
      );
      assert.equal(second.body.activeContracts.length, 1);
    }
  });

  it("looks updates up by offset and id, in current and deprecated forms", async () => {
    const [tx] = transactions(
      (
        await call<Json[]>(
          stack,
          "POST",
          "/v2/updates",
          updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])),
          aliceToken,
        )
      ).body,
    );
    const updateFormat = updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat;
    const byOffset = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-offset",
      { offset: tx.offset, updateFormat },
      aliceToken,
    );
    assert.equal(byOffset.body.update.Transaction.value.updateId, tx.updateId);
    const byId = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-id",
      { updateId: tx.updateId, updateFormat },
      aliceToken,
    );
    assert.equal(byId.body.update.Transaction.value.offset, tx.offset);
    const legacy = await call<Json>(
      stack,
      "POST",
      "/v2/updates/transaction-by-offset",
      { offset: tx.offset, requestingParties: [alice] },
      aliceToken,
    );
    assert.equal(legacy.body.transaction.updateId, tx.updateId);
    const legacyById = await call<Json>(
      stack,
      "POST",
      "/v2/updates/transaction-by-id",
      { updateId: tx.updateId, requestingParties: [alice] },
      aliceToken,
    );
    assert.equal(legacyById.body.transaction.offset, tx.offset);
    const tree = await call<Json>(
      stack,
      "GET",
      `/v2/updates/transaction-tree-by-offset/${tx.offset}?parties=${encodeURIComponent(alice)}`,
      undefined,
      aliceToken,
    );
    assert.equal(tree.status, 200, JSON.stringify(tree.body));
    assert.ok(tree.body.transaction.eventsById["0"].CreatedTreeEvent);
    const treeById = await call<Json>(
      stack,
      "GET",
      `/v2/updates/transaction-tree-by-id/${tx.updateId}?parties=${encodeURIComponent(alice)}`,
      undefined,
      aliceToken,
    );
    assert.equal(treeById.body.transaction.offset, tx.offset);
    const missing = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-id",
      { updateId: "1220ff", updateFormat },
      aliceToken,
    );
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, "UPDATE_NOT_FOUND");
    const badOffset = await call(
      stack,
      "GET",
      "/v2/updates/transaction-tree-by-offset/abc",
      undefined,
      aliceToken,
    );
    assert.equal(badOffset.status, 400);
  });

  it("pages updates", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/updates/get-updates-page",
      {
        beginOffsetExclusive: 0,
        endOffsetInclusive: end,
        maxPageSize: 2,
        updateFormat: updatesRequest("TRANSACTION_SHAPE_ACS_DELTA", wildcard([alice])).updateFormat,
      },
      aliceToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.updates.length, 2);
    assert.equal(typeof reply.body.nextPageToken, "string");
  });
});

describe("list twin limits", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--websocket-config.http-list-max-elements-limit", "2"]);
  });
  after(() => stack.stop());

  it("answers 413 past the element limit and truncates at a smaller limit", async () => {
    const bank = await allocate(stack, "bank");
    const token = await userFor(stack, "bank-user", [bank]);
    for (const i of [1, 2, 3]) {
      await call(
        stack,
        "POST",
        "/v2/commands/submit-and-wait",
        {
          commandId: `limit-${i}`,
          actAs: [bank],
          commands: [
            {
              CreateCommand: {
                templateId: IOU,
                createArguments: { issuer: bank, owner: bank, currency: "EUR", amount: "1", observers: [] },
              },
            },
          ],
        },
        token,
      );
    }
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, token)).body
      .offset;
    const request = { activeAtOffset: end, eventFormat: wildcard([bank]) };
    const tooMany = await call<Json>(stack, "POST", "/v2/state/active-contracts", request, token);
    assert.equal(tooMany.status, 413);
    assert.equal(tooMany.body.code, "JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED");
    assert.equal(
      tooMany.body.cause,
      "The number of matching elements (3) is greater than the node limit (2).",
    );
    const truncated = await call<Json[]>(stack, "POST", "/v2/state/active-contracts?limit=1", request, token);
    assert.equal(truncated.status, 200);
    assert.equal(truncated.body.length, 1);
  });
});
