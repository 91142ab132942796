import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ElementLimitExceededError,
  errorAnswer,
  errorFrameBody,
  InvalidValueError,
  methodNotAllowedError,
  requestTooLargeError,
  routeNotFoundError,
  slowConsumerBody,
  slowConsumerCloseReason,
} from "../../src/errors/index.js";

describe("error frames", () => {
  it("turns a malformed query frame into an INVALID_ARGUMENT frame with the HTTP wording", () => {
    const body = errorFrameBody(new InvalidValueError("body", "Unexpected token"));
    assert.equal(body.code, "INVALID_ARGUMENT");
    assert.equal(body.cause, "Invalid value for: body (Unexpected token)");
    assert.equal(body.errorCategory, 8);
    assert.equal(body.grpcCodeValue, 3);
  });

  it("tells a slow consumer where to resume, in the body and in the close reason", () => {
    const body = slowConsumerBody("hard_limit", 7, 42);
    assert.equal(body.code, "JSON_API_SLOW_CONSUMER");
    assert.deepEqual(body.context, {
      cause: "hard_limit",
      elements_delivered: "7",
      resume_after_offset: "42",
    });
    assert.equal(body.errorCategory, 2);
    assert.equal(body.retryInfo, "1 second");
    assert.equal(
      slowConsumerCloseReason("hard_limit", 42),
      "slow consumer (hard_limit); resume after offset 42",
    );
  });

  it("keeps the close reason within the 123 bytes a close frame allows", () => {
    const token = "x".repeat(200);
    assert.equal(slowConsumerCloseReason("write_deadline", token), "slow consumer (write_deadline)");
    assert.equal(slowConsumerBody("dropped", 0, undefined).context.resume_after_offset, undefined);
  });
});

describe("gateway errors", () => {
  it("answers unmatched routes with 404 and 405, as JsCantonErrors", () => {
    const notFound = routeNotFoundError("GET", "/v2/nope");
    assert.equal(notFound.httpStatus, 404);
    assert.equal(notFound.body.code, "NOT_FOUND");
    assert.equal(notFound.body.cause, "No endpoint at GET /v2/nope");
    const notAllowed = methodNotAllowedError("PUT");
    assert.equal(notAllowed.httpStatus, 405);
    assert.equal(notAllowed.body.code, "METHOD_NOT_ALLOWED");
  });

  it("answers an oversized body with 413 REQUEST_TOO_LARGE", () => {
    const error = requestTooLargeError("request body larger than 10 bytes");
    assert.equal(error.httpStatus, 413);
    assert.equal(error.body.code, "REQUEST_TOO_LARGE");
    assert.equal(error.body.errorCategory, 8);
  });

  it("answers a list twin past the node limit with 413, not the 409 of its category", () => {
    const answer = errorAnswer(new ElementLimitExceededError(4, 3));
    assert.equal(answer.kind, "json");
    assert.equal(answer.status, 413);
    if (answer.kind !== "json") return;
    assert.equal(answer.body.code, "JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED");
    assert.equal(
      answer.body.cause,
      "The number of matching elements (4) is greater than the node limit (3).",
    );
    assert.equal(answer.body.grpcCodeValue, 10);
  });
});
