import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { SandboxStore } from "../../../src/sandbox/ledger/sandbox-store.js";
import { SandboxError } from "../../../src/sandbox/sandbox-error.js";
import { checkStartOffset } from "../../../src/sandbox/services/start-offset.js";

const names = {
  field: "begin_exclusive",
  kind: "Begin",
  prunedCause: (pruned: number, ledgerEnd: number) => `pruned at ${pruned}, end ${ledgerEnd}`,
};

/** A store with three updates (party allocations), pruned up to offset 2. */
function prunedStore(): SandboxStore {
  const store = new SandboxStore({ participantName: "p1", synchronizerAliases: ["s1"] });
  for (const party of ["a::1220", "b::1220", "c::1220"]) {
    store.allocateParty(party, store.synchronizerIds, { identityProviderId: "", annotations: {} });
  }
  store.prune(2);
  return store;
}

function refusal(offset: number): [string, string] {
  try {
    checkStartOffset(prunedStore(), offset, names);
  } catch (error) {
    if (error instanceof SandboxError) return [error.code.id, error.cause];
    throw error;
  }
  throw new Error(`offset ${offset} was accepted`);
}

describe("checkStartOffset", () => {
  it("accepts an offset from the pruned offset up to the ledger end", () => {
    for (const offset of [2, 3]) checkStartOffset(prunedStore(), offset, names);
  });

  it("refuses a negative offset as out of range, naming the field", () => {
    deepStrictEqual(refusal(-1), [
      "OFFSET_OUT_OF_RANGE",
      "Offset -1 in begin_exclusive is a negative integer",
    ]);
  });

  it("refuses an offset after the ledger end, naming its kind", () => {
    deepStrictEqual(refusal(4), ["OFFSET_AFTER_LEDGER_END", "Begin offset (4) is after ledger end (3)"]);
  });

  it("refuses an offset before the pruned offset with the read's own cause", () => {
    deepStrictEqual(refusal(1), ["PARTICIPANT_PRUNED_DATA_ACCESSED", "pruned at 2, end 3"]);
    throws(() => checkStartOffset(prunedStore(), 0, names), SandboxError);
  });
});
