import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { tokenDigest } from "../../src/fanout/subscription-key.js";
import { HeldTokens, TokenHold } from "../../src/jwt/held-tokens.js";
import { signToken } from "./test-tokens.js";

describe("HeldTokens", () => {
  it("gives every holder of a token its exp, and keeps the token only while one holds it", () => {
    const exp = Math.floor(Date.now() / 1000) + 240;
    const alice = signToken("alice", { exp });
    const bob = signToken("bob", { exp: exp + 60 });
    const tokens = new HeldTokens(tokenDigest);
    strictEqual(tokens.hold(alice), exp * 1000);
    strictEqual(tokens.hold(alice), exp * 1000);
    strictEqual(tokens.hold(bob), (exp + 60) * 1000);
    strictEqual(tokens.size, 2);
    tokens.release(alice);
    strictEqual(tokens.size, 2);
    tokens.release(alice);
    strictEqual(tokens.size, 1);
    tokens.release(bob);
    strictEqual(tokens.size, 0);
    // A release without a hold takes nothing from another holder.
    tokens.hold(bob);
    tokens.release(alice);
    strictEqual(tokens.size, 1);
  });

  it("shares the text of a held token, and holds none after its last holder let go", () => {
    const alice = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 240 });
    // Another copy of the same text, as each socket's upgrade header gives its own.
    const again = `${alice.slice(0, 10)}${alice.slice(10)}`;
    const tokens = new HeldTokens(tokenDigest);
    strictEqual(tokens.shared(again), alice);
    tokens.hold(alice);
    strictEqual(tokens.shared(again), alice);
    strictEqual(tokens.shared("another token"), "another token");
    tokens.release(alice);
    strictEqual(tokens.size, 0);
  });

  it("decodes a token's claims once for its holders, and anew (kept by none) while none holds it", () => {
    const exp = Math.floor(Date.now() / 1000) + 240;
    const alice = signToken("alice", { exp });
    const again = `${alice.slice(0, 10)}${alice.slice(10)}`;
    const tokens = new HeldTokens(tokenDigest);
    const unheld = tokens.claims(alice);
    strictEqual(unheld?.subject, "alice");
    strictEqual(unheld?.expiresAtMs, exp * 1000);
    // Not held: each asker decodes its own, and nothing is kept.
    strictEqual(tokens.claims(again) === unheld, false);
    strictEqual(tokens.size, 0);
    tokens.hold(alice);
    const held = tokens.claims(again);
    deepStrictEqual(held, unheld);
    // Held: every asker gets the holders' one decoding, whichever copy of the text it has.
    strictEqual(tokens.claims(alice), held);
    strictEqual(tokens.claims("not a jwt"), undefined);
    tokens.release(alice);
    strictEqual(tokens.claims(again) === held, false);
  });

  it("makes a held token's digest once for its holders, the same as token-digest's", () => {
    const alice = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 240 });
    const tokens = new HeldTokens(tokenDigest);
    strictEqual(tokens.digest(alice), tokenDigest(alice));
    tokens.hold(alice);
    const held = tokens.digest(alice);
    strictEqual(held, tokenDigest(alice));
    strictEqual(tokens.digest(`${alice.slice(0, 10)}${alice.slice(10)}`), held);
    tokens.release(alice);
    strictEqual(tokens.size, 0);
    strictEqual(tokens.digest(alice), tokenDigest(alice));
  });

  it("has no expiry for a token without exp, nor for what is not a JWT", () => {
    const tokens = new HeldTokens(tokenDigest);
    strictEqual(tokens.hold(signToken("alice", { exp: null })), undefined);
    strictEqual(tokens.hold("not a jwt"), undefined);
    strictEqual(tokens.size, 2);
  });

  it("knows a token as accepted only while it is held, and forgets it with its last holder", () => {
    const alice = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 240 });
    const tokens = new HeldTokens(tokenDigest);
    tokens.accept(alice);
    strictEqual(tokens.accepted(alice), false, "accepting a token nobody holds keeps nothing");
    tokens.hold(alice);
    strictEqual(tokens.accepted(alice), false, "held, not judged");
    tokens.accept(alice);
    tokens.hold(alice);
    strictEqual(tokens.accepted(alice), true);
    tokens.release(alice);
    strictEqual(tokens.accepted(alice), true, "one holder still holds it");
    tokens.release(alice);
    strictEqual(tokens.accepted(alice), false);
    tokens.hold(alice);
    strictEqual(tokens.accepted(alice), false, "a later request on the token is asked again");
  });

  it("knows when a held token was accepted: the newest question's time, never renewed by a hold without one", () => {
    const token = signToken("alice", { exp: Math.floor(Date.now() / 1000) + 240 });
    const tokens = new HeldTokens(tokenDigest);
    strictEqual(tokens.acceptedAt(token), undefined); // not held
    const first = new TokenHold(tokens, token, true, 1_000);
    strictEqual(tokens.acceptedAt(token), 1_000);
    // A later upgrade admitted by that acceptance (no time of its own) keeps its time.
    const second = new TokenHold(tokens, token, true);
    strictEqual(tokens.acceptedAt(token), 1_000);
    // A newer question's yes moves it on; an older one's does not move it back.
    tokens.accept(token, 3_000);
    tokens.accept(token, 2_000);
    strictEqual(tokens.acceptedAt(token), 3_000);
    first.release();
    second.release();
    strictEqual(tokens.acceptedAt(token), undefined);
    // Accepted at a time not told (a stream claim's question): accepted, never fresh.
    const third = new TokenHold(tokens, token, true);
    strictEqual(tokens.accepted(token), true);
    strictEqual(tokens.acceptedAt(token), Number.NEGATIVE_INFINITY);
    third.release();
  });

  it("moves a TokenHold onto each renewed token, accepted, and gives the last one back once", () => {
    const now = Math.floor(Date.now() / 1000);
    const [first, second, third] = [240, 250, 260].map((s) => signToken("alice", { exp: now + s })) as [
      string,
      string,
      string,
    ];
    const tokens = new HeldTokens(tokenDigest);
    const hold = new TokenHold(tokens, first, false);
    strictEqual(hold.expiresAt, (now + 240) * 1000);
    strictEqual(tokens.accepted(first), false);
    hold.renewed(second);
    deepStrictEqual([tokens.size, tokens.accepted(second)], [1, true]);
    hold.renewed(third);
    hold.release();
    hold.release();
    hold.renewed(first);
    strictEqual(tokens.size, 0, "nothing held after the release, a late renewal included");
    const admitted = new TokenHold(tokens, first, true);
    strictEqual(tokens.accepted(first), true);
    admitted.release();
  });
});
