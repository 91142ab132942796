import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  activeContractsRequest,
  transactionTree,
  updatesRequest,
  updateTreesResponse,
  wildcardTransactionFormat,
} from "../../src/endpoints/legacy-requests.js";
import { operationId } from "../../src/endpoints/operation-id.js";
import { CantonHttpError } from "../../src/errors/index.js";

const WILDCARD = { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } };
const TEMPLATE = { identifierFilter: { TemplateFilter: { value: { templateId: "#p:M:T" } } } };

describe("legacy request forms", () => {
  it("rewrites filter + verbose into the 3.5 updateFormat", () => {
    const request = updatesRequest(
      { beginExclusive: 0, filter: { filtersByParty: { alice: { cumulative: [TEMPLATE] } } }, verbose: true },
      false,
    );
    const eventFormat = { filtersByParty: { alice: { cumulative: [TEMPLATE] } }, verbose: true };
    assert.deepEqual(request, {
      beginExclusive: 0,
      updateFormat: {
        includeTransactions: { eventFormat, transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
        includeReassignments: eventFormat,
      },
    });
  });

  it("adds a wildcard to tree filters so that trees keep every event", () => {
    const request = updatesRequest({ filter: { filtersForAnyParty: { cumulative: [TEMPLATE] } } }, true);
    const transactions = (request.updateFormat as { includeTransactions: Record<string, unknown> })
      .includeTransactions;
    assert.equal(transactions.transactionShape, "TRANSACTION_SHAPE_LEDGER_EFFECTS");
    assert.deepEqual(transactions.eventFormat, {
      filtersByParty: {},
      verbose: false,
      filtersForAnyParty: { cumulative: [TEMPLATE, WILDCARD] },
    });
  });

  it("passes the 3.5 form through and refuses both forms at once", () => {
    const updateFormat = { includeTransactions: {} };
    assert.deepEqual(updatesRequest({ updateFormat }, false), { updateFormat });
    assert.throws(
      () => updatesRequest({ updateFormat, filter: {} }, false),
      (error: unknown) =>
        error instanceof CantonHttpError &&
        error.httpStatus === 400 &&
        error.body.cause.startsWith(
          "The submitted request has invalid arguments: Both update_format and filter",
        ),
    );
    assert.throws(() => activeContractsRequest({}), CantonHttpError);
  });

  it("refuses a mixed or missing form with Canton's words, naming each request's own format field", () => {
    const causeOf = (attempt: () => unknown): string => {
      try {
        attempt();
      } catch (error) {
        assert.ok(error instanceof CantonHttpError && error.httpStatus === 400);
        return error.body.cause.replace("The submitted request has invalid arguments: ", "");
      }
      return assert.fail("not refused");
    };
    const either = (field: string) =>
      `Please use either backwards compatible arguments (filter and verbose) or ${field}`;
    for (const [field, key, request] of [
      ["update_format", "updateFormat", (json: object) => updatesRequest(json, false)],
      ["event_format", "eventFormat", activeContractsRequest],
    ] as const) {
      const format = { [key]: {} };
      assert.equal(
        causeOf(() => request({ ...format, filter: {} })),
        `Both ${field} and filter are set. ${either(field)}, but not both.`,
      );
      assert.equal(
        causeOf(() => request({ ...format, verbose: true })),
        `Both ${field} and verbose are set. ${either(field)}, but not both.`,
      );
      assert.equal(
        causeOf(() => request({})),
        `Either filter/verbose or ${field} is required. ${either(field)}.`,
      );
      assert.deepEqual(request({ ...format, verbose: false, offset: 3 }), { ...format, offset: 3 });
    }
  });

  it("rewrites the ACS request's filter into an eventFormat", () => {
    assert.deepEqual(activeContractsRequest({ activeAtOffset: 5, filter: { filtersByParty: {} } }), {
      activeAtOffset: 5,
      eventFormat: { filtersByParty: {}, verbose: false },
    });
  });

  it("asks for every event of the parties in pointwise lookups", () => {
    assert.deepEqual(wildcardTransactionFormat(["bob"], "acs-delta"), {
      eventFormat: { filtersByParty: { bob: { cumulative: [WILDCARD] } }, verbose: true },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    });
  });
});

describe("legacy answer shapes", () => {
  const created = { nodeId: 0, contractId: "c1" };
  const exercised = { nodeId: 1, choice: "Archive" };
  const transaction = {
    updateId: "u1",
    offset: 3,
    effectiveAt: "2024-01-01T00:00:00Z",
    recordTime: "2024-01-01T00:00:00Z",
    synchronizerId: "s",
    commandId: "cmd",
    events: [{ CreatedEvent: created }, { ExercisedEvent: exercised }],
  };

  it("keys a transaction's events by node id as a tree", () => {
    assert.deepEqual(transactionTree(transaction), {
      updateId: "u1",
      effectiveAt: "2024-01-01T00:00:00Z",
      offset: 3,
      eventsById: {
        0: { CreatedTreeEvent: { value: created } },
        1: { ExercisedTreeEvent: { value: exercised } },
      },
      synchronizerId: "s",
      recordTime: "2024-01-01T00:00:00Z",
      commandId: "cmd",
    });
  });

  it("drops topology transactions from tree streams and keeps reassignments", () => {
    assert.equal(updateTreesResponse({ update: { TopologyTransaction: { value: {} } } }), undefined);
    const reassignment = { update: { Reassignment: { value: { updateId: "r" } } } };
    assert.deepEqual(updateTreesResponse(reassignment), reassignment);
    const tree = updateTreesResponse({ update: { Transaction: { value: transaction } } });
    assert.deepEqual(Object.keys((tree?.update as Record<string, unknown>) ?? {}), ["TransactionTree"]);
  });

  it("names operations as Canton does", () => {
    assert.equal(operationId("GET", "/v2/parties/participant-id"), "getV2PartiesParticipant-id");
    assert.equal(operationId("PATCH", "/v2/parties/{party}"), "patchV2PartiesParty");
  });
});
