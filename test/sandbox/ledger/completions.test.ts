import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import { decodeStatusDetails, STATUS_DETAILS_KEY } from "../../../src/proto/status-details.js";
import { rejection } from "../sandbox-client.js";
import {
  commands,
  createIou,
  LEDGER_SERVICES,
  type LedgerFixture,
  ledgerFixture,
  readStream,
} from "./ledger-fixture.js";

describe("sandbox ledger: completions", () => {
  let f: LedgerFixture;
  let bank: string;
  let alice: string;
  before(async () => {
    f = await ledgerFixture();
    bank = await f.allocate("bank");
    alice = await f.allocate("alice");
  });
  after(() => f.close());

  const completions = (request: object, count: number) =>
    readStream(f.sandbox.port, LEDGER_SERVICES.completion, "CompletionStream", request, count);

  it("shows a success with its update id, a DUPLICATE_COMMAND failure with its status, then checkpoints", async () => {
    const begin = (await f.state.GetLedgerEnd!({})).offset;
    const request = commands([bank], [createIou(bank, alice, "1")], {
      submissionId: "sub-1",
      deduplicationDuration: { seconds: "60", nanos: 0 },
    });
    await f.submission.Submit!(request);
    await f.submission.Submit!({ commands: { ...request.commands, submissionId: "sub-2" } });
    const [success, failure, checkpoint] = await completions(
      { userId: "alice-app", parties: [bank], beginExclusive: begin },
      3,
    );
    const ok = success.completion;
    strictEqual(ok.commandId, request.commands.commandId);
    strictEqual(ok.status.code, 0);
    strictEqual(ok.submissionId, "sub-1");
    deepStrictEqual(ok.actAs, [bank]);
    deepStrictEqual(ok.deduplicationDuration, { seconds: "60", nanos: 0 });
    strictEqual(ok.offset, String(Number(begin) + 1));
    strictEqual(ok.updateId.length, 68);
    const failed = failure.completion;
    strictEqual(failed.updateId, "");
    strictEqual(failed.submissionId, "sub-2");
    strictEqual(failed.status.code, grpc.status.ALREADY_EXISTS);
    // The details are Canton's: decode them as a client would from a gRPC error.
    const metadata = new grpc.Metadata();
    metadata.set(STATUS_DETAILS_KEY, statusBytes(failed.status));
    const details = decodeStatusDetails(metadata)!;
    strictEqual(details.errorInfos[0]?.reason, "DUPLICATE_COMMAND");
    strictEqual(details.errorInfos[0]?.metadata.completion_offset, ok.offset);
    strictEqual(checkpoint.offsetCheckpoint.offset, failed.offset);
  });

  it("shows only the requested user's completions and narrows actAs to the requested parties", async () => {
    const begin = (await f.state.GetLedgerEnd!({})).offset;
    await f.submission.Submit!({
      commands: { ...commands([bank, alice], [createIou(bank, alice, "1")]).commands, userId: "other-app" },
    });
    await f.submission.Submit!(commands([bank, alice], [createIou(bank, alice, "2")]));
    const [first] = await completions({ userId: "alice-app", parties: [alice], beginExclusive: begin }, 1);
    deepStrictEqual(first.completion.actAs, [alice]);
    strictEqual(first.completion.userId, "alice-app");
    strictEqual(first.completion.offset, String(Number(begin) + 2));
  });

  it("GetCompletions shows every user's completions for the parties, actAs narrowed to them", async () => {
    const begin = (await f.state.GetLedgerEnd!({})).offset;
    await f.submission.Submit!({
      commands: { ...commands([bank, alice], [createIou(bank, alice, "1")]).commands, userId: "other-app" },
    });
    await f.submission.Submit!(commands([bank], [createIou(bank, alice, "2")]));
    const [first, second] = await readStream(
      f.sandbox.port,
      LEDGER_SERVICES.completion,
      "GetCompletions",
      { parties: [bank], beginExclusive: begin },
      2,
    );
    deepStrictEqual(
      [first.completion.userId, second.completion.userId],
      ["other-app", commands([bank], []).commands.userId],
    );
    deepStrictEqual(first.completion.actAs, [bank]);
    strictEqual(second.completion.offset, String(Number(begin) + 2));
  });

  it("requires parties", async () => {
    const error = await rejection(completions({ userId: "alice-app", parties: [], beginExclusive: "0" }, 1));
    strictEqual(error.status.errorInfos[0]?.reason, "MISSING_FIELD");
  });
});

/** Re-encodes a google.rpc.Status object (as the completion carries it) to its wire bytes. */
function statusBytes(status: {
  code: number;
  message: string;
  details: { typeUrl: string; value: Buffer }[];
}) {
  const type = ledgerApiProtos().type("google.rpc.Status");
  const message = type.fromObject({
    code: status.code,
    message: status.message,
    details: status.details,
  });
  return Buffer.from(type.encode(message).finish());
}
