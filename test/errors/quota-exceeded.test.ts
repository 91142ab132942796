import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errorAnswer, quotaExceededError } from "../../src/errors/index.js";

describe("quotaExceededError", () => {
  it("is a 429 MAXIMUM_NUMBER_OF_STREAMS in ContentionOnSharedResources for connections and streams, retry after 1 second", () => {
    const error = quotaExceededError({
      cap: "ws-connections-per-address",
      limit: 100,
      reason: "limit",
      retryAfterMs: undefined,
    });
    assert.equal(error.httpStatus, 429);
    assert.deepEqual(error.body, {
      code: "MAXIMUM_NUMBER_OF_STREAMS",
      cause:
        "The number of WebSocket connections of this client address has reached the limit (100) of limits.ws-connections-per-address",
      correlationId: null,
      traceId: null,
      context: { limit: "limits.ws-connections-per-address", value: "100", reason: "limit" },
      resources: [],
      errorCategory: 2,
      grpcCodeValue: 10,
      retryInfo: "1 second",
      definiteAnswer: null,
    });
    assert.deepEqual(errorAnswer(error), { kind: "json", status: 429, body: error.body });
  });

  it("is a PARTICIPANT_BACKPRESSURE with a definite answer for the command rate, retryInfo when its token is back", () => {
    const error = quotaExceededError({
      cap: "commands-per-second-per-user",
      limit: 4,
      reason: "limit",
      retryAfterMs: 249.2,
    });
    assert.equal(error.body.code, "PARTICIPANT_BACKPRESSURE");
    assert.equal(error.body.retryInfo, "250 milliseconds");
    assert.equal(error.body.definiteAnswer, false);
    assert.equal(
      error.body.cause,
      "The gateway's limits.commands-per-second-per-user (4) is reached for this user",
    );
  });

  it("says when the table, not the cap, is full", () => {
    const error = quotaExceededError({
      cap: "streams-per-user",
      limit: 5,
      reason: "table-full",
      retryAfterMs: undefined,
    });
    assert.equal(error.body.context.reason, "table-full");
    assert.match(error.body.cause, /as many users and client addresses as it can; limits.streams-per-user/);
  });
});
