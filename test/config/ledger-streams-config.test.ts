import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";

describe("limits.ledger-streams*", () => {
  it("reads the participant's stream budget: 500 streams, 50 of them kept for authorization calls, 1000 waiting, 10 s, half of each per user by default", () => {
    assert.deepEqual(loadConfig({ argv: [], env: {} }).ledgerStreams, {
      limit: 500,
      reservedForAuthorization: 50,
      queueLimit: 1000,
      queueTimeoutMs: 10_000,
      subscriptionsPerUser: 225,
      authorizationsPerUser: 525,
    });
    const config = loadConfig({
      argv: ["--limits.ledger-streams", "0", "--limits.ledger-streams-queue-timeout", "2m"],
      env: { LEDGER_GATEWAY_LIMITS_LEDGER_STREAMS_QUEUE: "0" },
    });
    assert.deepEqual(config.ledgerStreams, {
      limit: 0,
      reservedForAuthorization: 0,
      queueLimit: 0,
      queueTimeoutMs: 120_000,
      subscriptionsPerUser: 0,
      authorizationsPerUser: 0,
    });
  });

  const perUserOf = (argv: string[]) => {
    const { subscriptionsPerUser, authorizationsPerUser } = loadConfig({ argv, env: {} }).ledgerStreams;
    return [subscriptionsPerUser, authorizationsPerUser];
  };

  it("reads each user's share as a count or a whole percentage of the subscriptions' streams, and gives its questions the same share of the reserve and queue", () => {
    const budget = ["--limits.ledger-streams", "10", "--limits.ledger-streams-queue", "4"];
    // 10 streams, 1 kept: 9 for subscriptions; 1 + 4 places for questions.
    assert.deepEqual(perUserOf(budget), [5, 3], "50% of 9 rounded up; 5/9 of 5 rounded up");
    assert.deepEqual(perUserOf([...budget, "--limits.ledger-streams-per-user", "3"]), [3, 2]);
    assert.deepEqual(perUserOf([...budget, "--limits.ledger-streams-per-user", "100%"]), [9, 5]);
    assert.deepEqual(
      perUserOf([...budget, "--limits.ledger-streams-per-user", "12"]),
      [12, 5],
      "past the subscriptions' streams: the rest may wait",
    );
    assert.deepEqual(perUserOf([...budget, "--limits.ledger-streams-per-user", "1%"]), [1, 1]);
    assert.throws(
      () => perUserOf([...budget, "--limits.ledger-streams-per-user", "0"]),
      (error: Error) => error instanceof ConfigError && /limits\.ledger-streams-per-user/.test(error.message),
    );
  });

  const reserveOf = (argv: string[], env: Record<string, string> = {}, readFile?: () => string) =>
    loadConfig({ argv, env, ...(readFile ? { readFile } : {}) }).ledgerStreams.reservedForAuthorization;

  it("reads the reserve for authorization calls as a count or a whole percentage of the budget, rounded up", () => {
    assert.equal(reserveOf(["--limits.ledger-streams", "3"]), 1, "10% of 3, rounded up");
    assert.equal(reserveOf(["--limits.ledger-streams", "2"]), 1);
    assert.equal(reserveOf(["--limits.ledger-streams", "1000"]), 100);
    assert.equal(reserveOf(["--limits.ledger-streams-reserved-for-authorization", "25%"]), 125);
    assert.equal(reserveOf([], { LEDGER_GATEWAY_LIMITS_LEDGER_STREAMS_RESERVED_FOR_AUTHORIZATION: "7" }), 7);
    assert.equal(
      reserveOf(
        ["--config", "gateway.yaml"],
        {},
        () => "limits:\n  ledger-streams: 10\n  ledger-streams-reserved-for-authorization: 4\n",
      ),
      4,
      "a number in a file",
    );
  });

  it("refuses a reserve of 0, one that leaves subscriptions no stream (a budget of 1), and one that is neither count nor percentage", () => {
    const refused = (argv: string[], pattern: RegExp) =>
      assert.throws(
        () => loadConfig({ argv, env: {} }),
        (error: Error) => error instanceof ConfigError && pattern.test(error.message),
        argv.join(" "),
      );
    const key = "--limits.ledger-streams-reserved-for-authorization";
    refused([key, "0"], /at least 1 stream for authorization calls/);
    refused([key, "0%"], /at least 1 stream for authorization calls/);
    refused(
      ["--limits.ledger-streams", "1"],
      /limits\.ledger-streams 1 leaves subscriptions no stream.* at least 2$/,
    );
    refused(
      ["--limits.ledger-streams", "5", key, "5"],
      /or limits\.ledger-streams-reserved-for-authorization below 5$/,
    );
    refused([key, "100%"], /leaves subscriptions no stream/);
    for (const bad of ["ten", "10.5%", "101%", "-1", "%"])
      refused([key, bad], /limits\.ledger-streams-reserved-for-authorization/);
    // No budget, no reserve: whatever it says is not used.
    assert.equal(reserveOf(["--limits.ledger-streams", "0", key, "0"]), 0);
  });

  it("refuses a longest wait of 0 and a budget below 0, naming the key", () => {
    assert.throws(
      () => loadConfig({ argv: ["--limits.ledger-streams-queue-timeout", "0s"], env: {} }),
      (error: Error) =>
        error instanceof ConfigError && /limits\.ledger-streams-queue-timeout/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ argv: ["--limits.ledger-streams", "-1"], env: {} }),
      (error: Error) => error instanceof ConfigError && /limits\.ledger-streams/.test(error.message),
    );
  });
});
