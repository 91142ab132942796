import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";

describe("limits.ledger-streams*", () => {
  it("reads the participant's stream budget: 500 streams, 1000 waiting, 10 s by default", () => {
    assert.deepEqual(loadConfig({ argv: [], env: {} }).ledgerStreams, {
      limit: 500,
      queueLimit: 1000,
      queueTimeoutMs: 10_000,
    });
    const config = loadConfig({
      argv: ["--limits.ledger-streams", "0", "--limits.ledger-streams-queue-timeout", "2m"],
      env: { LEDGER_GATEWAY_LIMITS_LEDGER_STREAMS_QUEUE: "0" },
    });
    assert.deepEqual(config.ledgerStreams, { limit: 0, queueLimit: 0, queueTimeoutMs: 120_000 });
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
