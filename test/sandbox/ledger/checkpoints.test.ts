import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createLedgerRuntime } from "../../../src/sandbox/ledger/ledger-runtime.js";
import { IDLE_STREAM_OFFSET_CHECKPOINT_TIMEOUT_MS } from "../../../src/sandbox/ledger/reads/update-feed.js";
import { SandboxStore } from "../../../src/sandbox/ledger/sandbox-store.js";
import {
  commands,
  createIou,
  LEDGER_SERVICES,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  readFor,
  txFormat,
  wildcard,
} from "./ledger-fixture.js";

/** What a tailing stream sent, as `c<offset>` for checkpoints and `u<offset>` for the rest. */
const kinds = (messages: Msg[]) =>
  messages.map((m) =>
    m.offsetCheckpoint !== undefined && m.offsetCheckpoint !== null
      ? `c${m.offsetCheckpoint.offset}`
      : `u${m.completion?.offset ?? m.transaction?.offset}`,
  );

describe("sandbox ledger: offset checkpoints of tailing streams (issue 15, item 1)", () => {
  it("defaults the idle timeout to Canton's idle-stream-offset-checkpoint-timeout, one minute", () => {
    const runtime = createLedgerRuntime(
      new SandboxStore({ participantName: "p", synchronizerAliases: ["s"] }),
    );
    strictEqual(runtime.idleStreamOffsetCheckpointTimeoutMs, 60_000);
  });

  describe("with a short idle timeout (200 ms)", () => {
    let f: LedgerFixture;
    let bank: string;
    let alice: string;
    before(async () => {
      f = await ledgerFixture({ idleStreamOffsetCheckpointTimeoutMs: 200 });
      bank = await f.allocate("bank");
      alice = await f.allocate("alice");
    });
    after(() => f.close());

    it("sends an idle completion stream one checkpoint at the ledger end, not one per timeout", async () => {
      await f.submission.Submit!(commands([bank], [createIou(bank, alice, "1")]));
      const end = Number((await f.state.GetLedgerEnd!({})).offset);
      // Eight idle timeouts long: the old sandbox sent a checkpoint for each of them.
      const received = await readFor(
        f.sandbox.port,
        LEDGER_SERVICES.completion,
        "CompletionStream",
        { userId: "alice-app", parties: [bank], beginExclusive: String(end - 1) },
        1_600,
      );
      deepStrictEqual(kinds(received), [`u${end}`, `c${end}`]);
    });

    it("sends the next checkpoint only once the ledger moved past the last one", async () => {
      const begin = Number((await f.state.GetLedgerEnd!({})).offset);
      const request = {
        beginExclusive: String(begin),
        updateFormat: { includeTransactions: txFormat(wildcard([alice]), "TRANSACTION_SHAPE_ACS_DELTA") },
      };
      const reading = readFor(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", request, 2_000);
      await new Promise((resolve) => setTimeout(resolve, 900));
      await f.submission.Submit!(commands([bank], [createIou(bank, alice, "2")]));
      const received = await reading;
      deepStrictEqual(kinds(received), [`c${begin}`, `u${begin + 1}`, `c${begin + 1}`]);
    });
  });

  describe("with Canton's default idle timeout", () => {
    let f: LedgerFixture;
    let bank: string;
    before(async () => {
      f = await ledgerFixture({
        idleStreamOffsetCheckpointTimeoutMs: IDLE_STREAM_OFFSET_CHECKPOINT_TIMEOUT_MS,
      });
      bank = await f.allocate("bank");
      await f.submission.Submit!(commands([bank], [createIou(bank, bank, "1")]));
    });
    after(() => f.close());

    it("tells a stream opened at the ledger end that it is caught up, once", async () => {
      const end = Number((await f.state.GetLedgerEnd!({})).offset);
      const received = await readFor(
        f.sandbox.port,
        LEDGER_SERVICES.completion,
        "CompletionStream",
        { userId: "alice-app", parties: [bank], beginExclusive: String(end) },
        2_500,
      );
      deepStrictEqual(kinds(received), [`c${end}`]);
    });
  });
});
