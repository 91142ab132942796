import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, call, userFor, wsStream } from "./ledger-client.js";

const HUGE = 100_000;
const CAUSE_LIMIT = 512 + "...".length;

interface JsError {
  code: string;
  cause: string;
  errorCategory: number;
  grpcCodeValue: number;
}

/**
 * Identifiers longer than Canton allows are answered by the gateway with the error Canton gives
 * for them, and never reach the ledger (the sandbox counts its calls): a 100,000-character id
 * used to come back inside an error trailer past nghttp2's 64 KiB limit and stall every user.
 */
describe("over-long identifiers are refused before they reach the ledger", () => {
  let stack: Stack;
  let party: string;
  let reader: string;
  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "bounds");
    reader = await userFor(stack, "bounds-reader", [], [party]);
  });
  after(() => stack.stop());

  const eventFormat = () => ({ filtersByParty: { [party]: {} }, verbose: false });

  it("answers a 100,000-character contractId with Canton's INVALID_FIELD, and other calls go on", async () => {
    const before = stack.sandbox.calls.started("EventQueryService/GetEventsByContractId");
    const contractId = `00${"a".repeat(HUGE)}`;
    const [bad, version] = await Promise.all([
      call<JsError>(
        stack,
        "POST",
        "/v2/events/events-by-contract-id",
        { contractId, eventFormat: eventFormat() },
        reader,
      ),
      call(stack, "GET", "/v2/version"),
    ]);
    strictEqual(bad.status, 400);
    strictEqual(bad.body.code, "INVALID_FIELD");
    strictEqual(bad.body.errorCategory, 8);
    strictEqual(bad.body.grpcCodeValue, 3);
    ok(
      bad.body.cause.startsWith(
        'The submitted command has a field with invalid value: Invalid field contract_id: cannot parse ContractId "00aaa',
      ),
      bad.body.cause.slice(0, 200),
    );
    ok(bad.body.cause.length <= CAUSE_LIMIT, `cause of ${bad.body.cause.length} characters`);
    strictEqual(version.status, 200);
    strictEqual(stack.sandbox.calls.started("EventQueryService/GetEventsByContractId"), before);
    // Canton's longest contract id (V1, full suffix: 254 hex digits) still reaches the ledger.
    const longest = await call<JsError>(
      stack,
      "POST",
      "/v2/events/events-by-contract-id",
      { contractId: `00${"a".repeat(252)}`, eventFormat: eventFormat() },
      reader,
    );
    strictEqual(longest.status, 404);
    strictEqual(stack.sandbox.calls.started("EventQueryService/GetEventsByContractId"), before + 1);
  });

  it("answers an over-long updateId, in the body and in the path, with INVALID_ARGUMENT", async () => {
    const updateId = "u".repeat(HUGE);
    const before = stack.sandbox.calls.started("UpdateService/GetUpdateById");
    const format = {
      includeTransactions: { eventFormat: eventFormat(), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
    };
    const body = await call<JsError>(
      stack,
      "POST",
      "/v2/updates/update-by-id",
      { updateId, updateFormat: format },
      reader,
    );
    const path = await call<JsError>(
      stack,
      "GET",
      `/v2/updates/transaction-tree-by-id/${"u".repeat(300)}?parties=${encodeURIComponent(party)}`,
      undefined,
      reader,
    );
    for (const reply of [body, path]) {
      strictEqual(reply.status, 400);
      deepStrictEqual(
        { code: reply.body.code, cause: reply.body.cause },
        {
          code: "INVALID_ARGUMENT",
          cause: "The submitted request has invalid arguments: Daml-LF Ledger String is too long (max: 255)",
        },
      );
    }
    strictEqual(stack.sandbox.calls.started("UpdateService/GetUpdateById"), before);
  });

  it("answers an over-long partyIdHint, a party in a query and a filtersByParty key with INVALID_ARGUMENT", async () => {
    const tooLong = "p".repeat(HUGE);
    const replies = [
      await call<JsError>(stack, "POST", "/v2/parties", { partyIdHint: tooLong }),
      await call<JsError>(stack, "GET", `/v2/parties/${party}?parties=${"p".repeat(256)}`),
      await call<JsError>(stack, "POST", "/v2/state/active-contracts", {
        eventFormat: { filtersByParty: { [tooLong]: {} } },
        activeAtOffset: 0,
      }),
    ];
    for (const reply of replies) {
      strictEqual(reply.status, 400);
      strictEqual(reply.body.code, "INVALID_ARGUMENT");
      strictEqual(
        reply.body.cause,
        "The submitted request has invalid arguments: Daml-LF Party is too long (max: 255)",
      );
    }
    strictEqual(stack.sandbox.calls.started("PartyManagementService/AllocateParty"), 1);
    strictEqual(stack.sandbox.calls.started("StateService/GetActiveContracts"), 0);
  });

  it("ends a WebSocket stream asked for an over-long party with the error frame", async () => {
    const { frames } = await wsStream(
      stack,
      "/v2/updates",
      updatesRequest(partyFilter("q".repeat(300))),
      stack.token,
    );
    strictEqual(frames.length, 1);
    strictEqual(frames[0]?.code, "INVALID_ARGUMENT");
    strictEqual(stack.sandbox.calls.started("UpdateService/GetUpdates"), 0);
  });
});
