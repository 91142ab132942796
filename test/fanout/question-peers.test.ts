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
    peers.add("r", "q", stale);
    peers.add("r", "q", older);
    peers.add("r", "q", newer);
    // The latest to join first.
    deepStrictEqual(peers.freshYes("r", "q", "t"), 150);
    // Another token, another question, or a question nobody joined with: the joiner asks.
    deepStrictEqual(peers.freshYes("r", "q", "u"), undefined);
    deepStrictEqual(peers.freshYes("r", "other", "t"), undefined);
    deepStrictEqual(peers.freshYes("another request", "q", "t"), undefined);
    peers.remove("r", "q", newer);
    deepStrictEqual(peers.freshYes("r", "q", "t"), 100);
    peers.remove("r", "q", older);
    peers.remove("r", "q", stale);
    deepStrictEqual(peers.freshYes("r", "q", "t"), undefined);
    deepStrictEqual(peers.size, 0);
  });

  it("keeps a question's latest four members: a fresher yes is never crowded out by older ones", () => {
    const peers = new QuestionPeers();
    const first = Array.from({ length: 4 }, () => member("t", undefined));
    for (const peer of first) peers.add("r", "q", peer);
    deepStrictEqual(peers.freshYes("r", "q", "t"), undefined);
    // A joiner that found no fresh yes asked; kept, its yes answers the next ones.
    const asked = member("t", 500);
    peers.add("r", "q", asked);
    deepStrictEqual(peers.freshYes("r", "q", "t"), 500);
    // The earliest kept made room: its leave changes nothing.
    peers.remove("r", "q", first[0] as UpstreamSource);
    deepStrictEqual(peers.freshYes("r", "q", "t"), 500);
    peers.remove("r", "q", asked);
    deepStrictEqual(peers.freshYes("r", "q", "t"), undefined);
  });
});
