import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { Grant } from "../../src/endpoints/stream-grant.js";

const policy = { staleAfterMs: 1000, ledgerAwayGraceMs: 0 };

describe("Grant listeners", () => {
  it("tells its listener of each new yes on its token, and none after it was removed", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const remove = grant.onConfirmed(() => told.push("gate"));
    grant.confirm("t", 10);
    // Not newer than the last yes, or on another token: nothing new.
    grant.confirm("t", 5);
    grant.confirm("other", 20);
    remove();
    grant.confirm("t", 30);
    deepStrictEqual(told, ["gate"]);
  });

  it("tells every listener in the order they came, a removed one no more", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const removeFirst = grant.onConfirmed(() => told.push("first"));
    grant.onConfirmed(() => told.push("second"));
    grant.onConfirmed(() => told.push("third"));
    grant.confirm("t", 10);
    removeFirst();
    grant.onConfirmed(() => told.push("fourth"));
    grant.renew("t2", 20);
    deepStrictEqual(told, ["first", "second", "third", "second", "third", "fourth"]);
  });

  it("tells a listener given twice once, and its first removal removes it", () => {
    const grant = new Grant("t", policy, 0, undefined);
    const told: string[] = [];
    const listener = () => told.push("gate");
    const remove = grant.onConfirmed(listener);
    grant.onConfirmed(listener);
    grant.confirm("t", 10);
    remove();
    grant.confirm("t", 20);
    deepStrictEqual(told, ["gate"]);
  });
});

describe("Grant.yesWithin: the yes a joiner of the same token and request may share", () => {
  it("gives when the newest yes was asked, on the current token, while it is young enough", () => {
    const grant = new Grant("t", policy, 0, 10_000);
    deepStrictEqual(grant.yesWithin("t", 100, 500), undefined); // no yes yet
    grant.confirm("t", 200);
    deepStrictEqual(grant.yesWithin("t", 600, 500), 200);
    deepStrictEqual(grant.yesWithin("t", 700, 500), 200);
    deepStrictEqual(grant.yesWithin("t", 701, 500), undefined); // older than maxAgeMs
    deepStrictEqual(grant.yesWithin("other", 300, 500), undefined); // another token's question
  });

  it("gives none once the token expired, nor for the token a renewal replaced", () => {
    const grant = new Grant("t", policy, 0, 1_000);
    grant.confirm("t", 900);
    deepStrictEqual(grant.yesWithin("t", 999, 500), 900);
    deepStrictEqual(grant.yesWithin("t", 1_000, 500), undefined);
    const renewed = new Grant("t", policy, 0, undefined);
    renewed.confirm("t", 10);
    renewed.renew("u", 20);
    deepStrictEqual(renewed.yesWithin("t", 30, 500), undefined);
    deepStrictEqual(renewed.yesWithin("u", 30, 500), 20);
  });
});
