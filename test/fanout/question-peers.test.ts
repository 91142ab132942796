import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { QuestionPeers } from "../../src/fanout/question-peers.js";
import type { UpstreamSource } from "../../src/fanout/subscription.js";

/** A member whose fresh yes is `yes` on `token` (undefined: none). */
function member(token: string, yes: number | undefined): UpstreamSource {
  return {
    open: () => {
      throw new Error("not opened here");
    },
    offsetOf: () => undefined,
    isCheckpoint: () => false,
    isTokenRefusal: () => false,
    expiryOf: () => undefined,
    freshYes: (asked) => (asked === token ? yes : undefined),
  };
}

describe("QuestionPeers", () => {
  it("answers a question with its members' newest fresh yes on the joiner's token, and nothing else", () => {
    const peers = new QuestionPeers();
    const stale = member("t", undefined);
    const older = member("t", 100);
    const newer = member("t", 150);
    peers.add("q", stale);
    peers.add("q", older);
    peers.add("q", newer);
    deepStrictEqual(peers.freshYes("q", "t"), 150);
    // Another token, another question, or a question nobody joined with: the joiner asks.
    deepStrictEqual(peers.freshYes("q", "u"), undefined);
    deepStrictEqual(peers.freshYes("other", "t"), undefined);
    peers.remove("q", newer);
    deepStrictEqual(peers.freshYes("q", "t"), 100);
    peers.remove("q", older);
    peers.remove("q", stale);
    deepStrictEqual(peers.freshYes("q", "t"), undefined);
    deepStrictEqual(peers.size, 0);
  });

  it("looks at a question's first four members only: a crowd without a fresh yes costs each joiner O(1)", () => {
    const peers = new QuestionPeers();
    for (let i = 0; i < 4; i += 1) peers.add("q", member("t", undefined));
    const fresh = member("t", 500);
    peers.add("q", fresh);
    deepStrictEqual(peers.freshYes("q", "t"), undefined);
  });
});
