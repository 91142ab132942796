import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, readServerStream, rejection, SERVICES, serviceClient } from "./sandbox-client.js";

describe("sandbox auth step and Canton error form", () => {
  let sandbox: RunningSandbox;
  let version: ReturnType<typeof serviceClient>;
  let state: ReturnType<typeof serviceClient>;
  let parties: ReturnType<typeof serviceClient>;
  before(async () => {
    sandbox = await startSandbox({ port: 0, participantName: "participant1" });
    version = serviceClient(sandbox.port, SERVICES.version);
    state = serviceClient(sandbox.port, SERVICES.state);
    parties = serviceClient(sandbox.port, SERVICES.parties);
  });
  after(async () => {
    for (const client of [version, state, parties]) client.close();
    await sandbox.stop();
  });

  it("rejects a call without a token as UNAUTHENTICATED, redacted as Canton does (request id only)", async () => {
    const error = await rejection(state.GetLedgerEnd!({}, bearer(null)));
    strictEqual(error.code, grpc.status.UNAUTHENTICATED);
    match(
      error.details,
      /^An error occurred\. Please contact the operator and inquire about the request [0-9a-f]{32} with tid [0-9a-f]{32}$/,
    );
    deepStrictEqual(error.status.errorInfos, []);
    strictEqual(error.status.requestInfos.length, 1);
    ok(error.details.includes(error.status.requestInfos[0]!.requestId));
  });

  it("answers GetLedgerApiVersion without a token, as Canton does (an unsecured method)", async () => {
    const answer = (await version.GetLedgerApiVersion!({}, bearer(null))) as { version: string };
    strictEqual(answer.version, "3.5.10");
  });

  it("rejects a token that is not a JWT", async () => {
    const error = await rejection(version.GetLedgerApiVersion!({}, bearer("not-a-jwt")));
    strictEqual(error.code, grpc.status.UNAUTHENTICATED);
  });

  it("uses the client's W3C trace id as tid and correlation id", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const metadata = bearer();
    metadata.set("traceparent", `00-${traceId}-00f067aa0ba902b7-01`);
    const error = await rejection(parties.GetParties!({ parties: ["bad!party"] }, metadata));
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(
      error.details,
      `INVALID_ARGUMENT(8,4bf92f35): The submitted request has invalid arguments: non expected character 0x21 in Daml-LF Party "bad!party"`,
    );
    deepStrictEqual(error.status.errorInfos, [
      {
        reason: "INVALID_ARGUMENT",
        domain: "",
        metadata: { participant: "participant1", definite_answer: "false", tid: traceId, category: "8" },
      },
    ]);
    deepStrictEqual(error.status.requestInfos, [{ requestId: traceId, servingData: "" }]);
    deepStrictEqual(error.status.retryInfos, []);
  });

  it("fails a server stream in Canton's form (status details in the stream's trailers)", async () => {
    const error = await rejection(
      readServerStream(sandbox.port, SERVICES.state, "GetActiveContracts", { activeAtOffset: "0" }),
    );
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(error.status.errorInfos[0]?.reason, "MISSING_FIELD");
    strictEqual(error.status.errorInfos[0]?.metadata.category, "8");
    match(error.details, /The submitted command is missing a mandatory field: event_format/);
  });

  it("answers an incomplete reassignment submission in Canton's form", async () => {
    const submission = serviceClient(sandbox.port, "com.daml.ledger.api.v2.CommandSubmissionService");
    const error = await rejection(submission.SubmitReassignment!({})).finally(() => submission.close());
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(error.status.errorInfos[0]?.reason, "MISSING_FIELD");
    match(error.details, /The submitted command is missing a mandatory field: reassignment_commands/);
  });
});
