import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { Grant } from "../../src/endpoints/stream-grant.js";

const policy = { staleAfterMs: 1000, ledgerAwayGraceMs: 0 };

describe("Grant listeners", () => {
  it("tells its listener of each new yes on its token, and none after it was removed", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const gate = { confirmed: () => told.push("gate") };
    grant.onConfirmed(gate);
    grant.confirm("t", 10);
    // Not newer than the last yes, or on another token: nothing new.
    grant.confirm("t", 5);
    grant.confirm("other", 20);
    grant.offConfirmed(gate);
    grant.confirm("t", 30);
    deepStrictEqual(told, ["gate"]);
  });

  it("tells every listener in the order they came, a removed one no more", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const listener = (name: string) => ({ confirmed: () => told.push(name) });
    const first = listener("first");
    grant.onConfirmed(first);
    grant.onConfirmed(listener("second"));
    grant.onConfirmed(listener("third"));
    grant.confirm("t", 10);
    grant.offConfirmed(first);
    grant.onConfirmed(listener("fourth"));
    grant.renew("t2", 20);
    deepStrictEqual(told, ["first", "second", "third", "second", "third", "fourth"]);
  });

  it("tells a listener given twice once, and its first removal removes it", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const listener = { confirmed: () => told.push("gate") };
    grant.onConfirmed(listener);
    grant.onConfirmed(listener);
    grant.confirm("t", 10);
    grant.offConfirmed(listener);
    grant.confirm("t", 20);
    deepStrictEqual(told, ["gate"]);
  });
});
