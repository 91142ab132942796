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
  it("answers a question with a kept member's fresh yes on the joiner's token, and nothing else", () => {
    const peers = new QuestionPeers();
    const stale = member("t", undefined);
    const older = member("t", 100);
    const newer = member("t", 150);
    peers.add("q", stale);
    peers.add("q", older);
    peers.add("q", newer);
    deepStrictEqual(peers.freshYes("q", "t"), 100);
    // Another token, another question, or a question nobody joined with: the joiner asks.
    deepStrictEqual(peers.freshYes("q", "u"), undefined);
    deepStrictEqual(peers.freshYes("other", "t"), undefined);
    peers.remove("q", older);
    deepStrictEqual(peers.freshYes("q", "t"), 150);
    peers.remove("q", newer);
    peers.remove("q", stale);
    deepStrictEqual(peers.freshYes("q", "t"), undefined);
    deepStrictEqual(peers.size, 0);
  });

  it("keeps a question's first four members only: a crowd's joins and leaves cost O(1)", () => {
    const peers = new QuestionPeers();
    const first = Array.from({ length: 4 }, () => member("t", undefined));
    for (const peer of first) peers.add("q", peer);
    const fifth = member("t", 500);
    peers.add("q", fifth);
    // Not kept: its yes is not looked at; a later joiner asks, and is kept once there is room.
    deepStrictEqual(peers.freshYes("q", "t"), undefined);
    peers.remove("q", fifth);
    peers.remove("q", first[0] as UpstreamSource);
    const later = member("t", 700);
    peers.add("q", later);
    deepStrictEqual(peers.freshYes("q", "t"), 700);
  });
});
