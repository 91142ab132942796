import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { InvalidJsonError } from "../../src/codec/index.js";
import {
  ElementLimitExceededError,
  errorAnswer,
  httpStatusOfGrpc,
  InvalidValueError,
  isGatewayFault,
  isTokenRefusal,
  jsCantonErrorOfGrpc,
} from "../../src/errors/index.js";
import { encodeStatusDetails, STATUS_DETAILS_KEY } from "../../src/proto/status-details.js";

function grpcError(code: status, message: string, details?: Buffer): ServiceError {
  const metadata = new Metadata();
  if (details) metadata.set(STATUS_DETAILS_KEY, details);
  return Object.assign(new Error(`${code} ${status[code]}: ${message}`), {
    code,
    details: message,
    metadata,
  });
}

describe("isTokenRefusal", () => {
  const withReason = (code: status, reason: string) =>
    grpcError(
      code,
      "x",
      encodeStatusDetails({
        code,
        message: `${reason}(2,t1): x`,
        errorInfos: [{ reason, domain: "", metadata: { category: "2" } }],
        requestInfos: [],
        retryInfos: [],
        resourceInfos: [],
      }),
    );

  it("is the ledger refusing the token: UNAUTHENTICATED, PERMISSION_DENIED, ACCESS_TOKEN_EXPIRED, STALE_STREAM_AUTHORIZATION", () => {
    assert.equal(isTokenRefusal(grpcError(status.UNAUTHENTICATED, "x")), true);
    assert.equal(isTokenRefusal(grpcError(status.PERMISSION_DENIED, "x")), true);
    // How Canton (and the sandbox) end a stream whose token expired while it ran.
    assert.equal(isTokenRefusal(withReason(status.ABORTED, "ACCESS_TOKEN_EXPIRED")), true);
    // How Canton ends a running stream whose user's rights changed.
    assert.equal(isTokenRefusal(withReason(status.ABORTED, "STALE_STREAM_AUTHORIZATION")), true);
  });

  it("is not any other failure, ABORTED included", () => {
    assert.equal(isTokenRefusal(withReason(status.ABORTED, "SEQUENCER_BACKPRESSURE")), false);
    assert.equal(isTokenRefusal(grpcError(status.UNAVAILABLE, "x")), false);
    assert.equal(isTokenRefusal(new Error("not a gRPC error")), false);
  });
});

describe("jsCantonErrorOfGrpc", () => {
  it("decodes ErrorInfo, RequestInfo, RetryInfo and ResourceInfo as Canton does", () => {
    const details = encodeStatusDetails({
      code: status.NOT_FOUND,
      message: "PARTY_NOT_FOUND(11,abcd1234): Party not found",
      errorInfos: [
        {
          reason: "PARTY_NOT_FOUND",
          domain: "",
          metadata: { category: "11", tid: "abcd1234ef", definite_answer: "false", party: "p" },
        },
      ],
      requestInfos: [{ requestId: "corr-1", servingData: "" }],
      retryInfos: [{ retryDelaySeconds: 1 }],
      resourceInfos: [{ resourceType: "PARTY", resourceName: "p", owner: "", description: "" }],
    });
    const body = jsCantonErrorOfGrpc(
      grpcError(status.NOT_FOUND, "PARTY_NOT_FOUND(11,abcd1234): Party not found", details),
    );
    assert.deepEqual(body, {
      code: "PARTY_NOT_FOUND",
      cause: "Party not found",
      correlationId: "corr-1",
      traceId: "abcd1234ef",
      context: { category: "11", tid: "abcd1234ef", definite_answer: "false", party: "p" },
      resources: [["PARTY", "p"]],
      errorCategory: 11,
      grpcCodeValue: status.NOT_FOUND,
      retryInfo: "1 second",
      definiteAnswer: false,
    });
  });

  it("drops the correlation id when it equals the trace id", () => {
    const details = encodeStatusDetails({
      code: status.INVALID_ARGUMENT,
      message: "INVALID_ARGUMENT(8,t1): bad",
      errorInfos: [{ reason: "INVALID_ARGUMENT", domain: "", metadata: { category: "8", tid: "t1" } }],
      requestInfos: [{ requestId: "t1", servingData: "" }],
      retryInfos: [],
      resourceInfos: [],
    });
    const body = jsCantonErrorOfGrpc(grpcError(status.INVALID_ARGUMENT, "x", details));
    assert.equal(body.correlationId, null);
    assert.equal(body.retryInfo, null);
    assert.equal(body.cause, "bad");
  });

  it("falls back to the gRPC status when there is no ErrorInfo", () => {
    const body = jsCantonErrorOfGrpc(grpcError(status.UNAVAILABLE, "No connection established"));
    assert.equal(body.code, "UNAVAILABLE");
    assert.equal(body.cause, "No connection established");
    assert.equal(body.errorCategory, -1);
    assert.equal(body.grpcCodeValue, status.UNAVAILABLE);
  });
});

describe("errorAnswer", () => {
  it("maps gRPC codes to HTTP statuses as Canton's JSON API does", () => {
    const expected: [status, number][] = [
      [status.INVALID_ARGUMENT, 400],
      [status.FAILED_PRECONDITION, 400],
      [status.OUT_OF_RANGE, 400],
      [status.UNAUTHENTICATED, 401],
      [status.PERMISSION_DENIED, 403],
      [status.NOT_FOUND, 404],
      [status.ABORTED, 409],
      [status.ALREADY_EXISTS, 409],
      [status.RESOURCE_EXHAUSTED, 429],
      [status.CANCELLED, 499],
      [status.UNIMPLEMENTED, 501],
      [status.UNAVAILABLE, 503],
      [status.DEADLINE_EXCEEDED, 504],
      [status.INTERNAL, 500],
      [status.UNKNOWN, 500],
      [status.DATA_LOSS, 500],
    ];
    for (const [code, http] of expected) assert.equal(httpStatusOfGrpc(code), http, status[code]);
    assert.equal(errorAnswer(grpcError(status.PERMISSION_DENIED, "no")).status, 403);
  });

  it("answers malformed input with 400 text naming the location", () => {
    assert.deepEqual(errorAnswer(new InvalidValueError("query parameter pageSize", "expected an integer")), {
      kind: "text",
      status: 400,
      text: "Invalid value for: query parameter pageSize (expected an integer)",
    });
    assert.deepEqual(errorAnswer(new InvalidJsonError("partyIdHint", "expected a string")), {
      kind: "text",
      status: 400,
      text: "Invalid value for: body (partyIdHint: expected a string)",
    });
  });

  it("hides unexpected failures behind a 500 JsCantonError", () => {
    const answer = errorAnswer(new TypeError("secret internals"));
    assert.equal(answer.status, 500);
    assert.ok(answer.kind === "json" && !JSON.stringify(answer.body).includes("secret internals"));
  });
});

describe("redacted errors", () => {
  it("decode to code NA with the correlation and trace ids, as Canton's JSON API", () => {
    const message =
      "An error occurred. Please contact the operator and inquire about the request c0ffee with tid 0123abcd";
    const body = jsCantonErrorOfGrpc(grpcError(status.PERMISSION_DENIED, message));
    assert.equal(body.code, "NA");
    assert.equal(body.cause, "A security-sensitive error has been received");
    assert.equal(body.correlationId, "c0ffee");
    assert.equal(body.traceId, "0123abcd");
    assert.equal(body.errorCategory, -1);
    assert.equal(body.grpcCodeValue, status.PERMISSION_DENIED);
  });
});

describe("isGatewayFault", () => {
  it("is true only for failures of the gateway's own making, not for what a client or the ledger caused", () => {
    // A client's out-of-range integer on a WebSocket was logged at error level (fuzz finding F10).
    assert.equal(isGatewayFault(new InvalidJsonError("beginExclusive", "expected an integer")), false);
    assert.equal(isGatewayFault(new InvalidValueError("body", "bad")), false);
    assert.equal(isGatewayFault(grpcError(status.PERMISSION_DENIED, "no")), false);
    assert.equal(isGatewayFault(new ElementLimitExceededError(11, 10)), false);
    assert.equal(isGatewayFault(new TypeError("x is undefined")), true);
  });
});
