import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { NOT_YET_COMMITTED } from "../../../src/sandbox/ledger/commands/contract-factory.js";
import { LedgerIndex } from "../../../src/sandbox/ledger/ledger-index.js";
import type { StoredContract, TransactionNode } from "../../../src/sandbox/ledger/ledger-records.js";
import { SandboxStore, type TopologyUpdate } from "../../../src/sandbox/ledger/sandbox-store.js";

const TEMPLATE = { packageId: "pkg", moduleName: "M", entityName: "T" };

function contract(contractId: string, keyHash?: string): StoredContract {
  return {
    contractId,
    templateId: TEMPLATE,
    packageName: "p",
    argument: {},
    argumentValue: { record: { recordId: null, fields: [] } },
    signatories: ["alice"],
    observers: [],
    stakeholders: new Set(["alice"]),
    key:
      keyHash === undefined
        ? undefined
        : { json: keyHash, value: { text: keyHash }, hash: keyHash, maintainers: [] },
    createdAt: new Date(0),
    ...NOT_YET_COMMITTED,
    synchronizerId: "",
    reassignments: [],
  };
}

const create = (c: StoredContract, nodeId = 0): TransactionNode => ({
  kind: "create",
  nodeId,
  contract: c,
  witnesses: ["alice"],
});

const exercise = (c: StoredContract, consuming: boolean, nodeId = 0): TransactionNode => ({
  kind: "exercise",
  nodeId,
  contract: c,
  interfaceId: undefined,
  choice: "C",
  choiceArgument: { unit: {} },
  actingParties: ["alice"],
  consuming,
  lastDescendantNodeId: nodeId,
  exerciseResult: null,
  witnesses: ["alice"],
});

const newStore = () => new SandboxStore({ participantName: "p1", synchronizerAliases: ["s1"] });

describe("LedgerIndex", () => {
  it("records a create's offset, node, workflow and synchronizer, and finds it by id and key", () => {
    const index = new LedgerIndex(newStore());
    const a = contract("a", "k");
    const b = contract("b");
    index.applyTransaction([create(a, 0), create(b, 1)], 7, "wf", "sync");
    deepStrictEqual(
      [a.createdOffset, a.createdNodeId, a.createdWorkflowId, a.synchronizerId, a.sequence],
      [7, 0, "wf", "sync", 0],
    );
    strictEqual(b.sequence, 1);
    strictEqual(index.contract("a"), a);
    strictEqual(index.activeByKey("k"), a);
    deepStrictEqual(
      index.contractsInCreationOrder.map((c) => c.contractId),
      ["a", "b"],
    );
    strictEqual(index.contract("unknown"), undefined);
  });

  it("archives on a consuming exercise and frees the key; a non-consuming one changes nothing", () => {
    const index = new LedgerIndex(newStore());
    const a = contract("a", "k");
    index.applyTransaction([create(a)], 1, "", "sync");
    index.applyTransaction([exercise(a, false)], 2, "", "sync");
    deepStrictEqual([a.archivedOffset, index.activeByKey("k")], [undefined, a]);
    index.applyTransaction([exercise(a, true, 3)], 4, "", "sync");
    deepStrictEqual([a.archivedOffset, a.archivedNodeId, index.activeByKey("k")], [4, 3, undefined]);
    strictEqual(index.contract("a"), a, "an archived contract is still found by id");
  });

  it("keeps a key that a newer contract holds when its former holder is archived", () => {
    const index = new LedgerIndex(newStore());
    const old = contract("old", "k");
    const successor = contract("new", "k");
    index.applyTransaction([create(old)], 1, "", "sync");
    index.applyTransaction([create(successor, 0), exercise(old, true, 1)], 2, "", "sync");
    strictEqual(index.activeByKey("k"), successor);
  });

  it("finds updates by id, also those appended after an earlier lookup", () => {
    const store = newStore();
    const index = new LedgerIndex(store);
    const allocate = (party: string) => {
      store.allocateParty(party, store.synchronizerIds, { identityProviderId: "", annotations: {} });
      return store.updateAt(store.ledgerEnd()) as TopologyUpdate;
    };
    const first = allocate("alice::1220");
    strictEqual(index.updateById(first.updateId), first);
    const second = allocate("bob::1220");
    strictEqual(index.updateById(second.updateId), second);
    strictEqual(index.updateById("no such id"), undefined);
  });
});
