import { strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { HeldTokenExpiries } from "../../src/jwt/held-token-expiries.js";
import { signToken } from "./test-tokens.js";

describe("HeldTokenExpiries", () => {
  it("gives every holder of a token its exp, and keeps the token only while one holds it", () => {
    const exp = Math.floor(Date.now() / 1000) + 240;
    const alice = signToken("alice", { exp });
    const bob = signToken("bob", { exp: exp + 60 });
    const expiries = new HeldTokenExpiries();
    strictEqual(expiries.hold(alice), exp * 1000);
    strictEqual(expiries.hold(alice), exp * 1000);
    strictEqual(expiries.hold(bob), (exp + 60) * 1000);
    strictEqual(expiries.size, 2);
    expiries.release(alice);
    strictEqual(expiries.size, 2);
    expiries.release(alice);
    strictEqual(expiries.size, 1);
    expiries.release(bob);
    strictEqual(expiries.size, 0);
    // A release without a hold takes nothing from another holder.
    expiries.hold(bob);
    expiries.release(alice);
    strictEqual(expiries.size, 1);
  });

  it("shares the text of a held token, and holds none after its last holder let go", () => {
    const alice = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 240 });
    // Another copy of the same text, as each socket's upgrade header gives its own.
    const again = `${alice.slice(0, 10)}${alice.slice(10)}`;
    const expiries = new HeldTokenExpiries();
    strictEqual(expiries.shared(again), alice);
    expiries.hold(alice);
    strictEqual(expiries.shared(again), alice);
    strictEqual(expiries.shared("another token"), "another token");
    expiries.release(alice);
    strictEqual(expiries.size, 0);
  });

  it("has no expiry for a token without exp, nor for what is not a JWT", () => {
    const expiries = new HeldTokenExpiries();
    strictEqual(expiries.hold(signToken("alice", { exp: null })), undefined);
    strictEqual(expiries.hold("not a jwt"), undefined);
    strictEqual(expiries.size, 2);
  });
});
