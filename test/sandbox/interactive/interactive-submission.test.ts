import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { hashPreparedTransactionV2 } from "../../../src/sandbox/interactive/prepared-transaction-hash.js";
import { type SigningKey, signingKey } from "../../../src/sandbox/interactive/signing-keys.js";
import { partyToParticipantTransaction } from "../../../src/sandbox/interactive/topology-transactions.js";
import { createIou, IOU, type LedgerFixture, ledgerFixture, type Msg, v } from "../ledger/ledger-fixture.js";
import { rejection, serviceClient } from "../sandbox-client.js";
import { ed25519Wallet, p256Wallet, topologyMultiHash, type Wallet } from "./wallet.js";

const INTERACTIVE = "com.daml.ledger.api.v2.interactive.InteractiveSubmissionService";

describe("sandbox interactive submission (PrepareSubmission, ExecuteSubmission*)", () => {
  let f: LedgerFixture;
  let interactive: ReturnType<typeof serviceClient>;
  let synchronizer: string;
  let alice: Wallet;
  let aliceParty: string;
  let counter = 0;
  const next = (prefix: string) => `${prefix}-${++counter}`;

  /** Onboards an external party whose PartyToParticipant registers all `wallets` with `threshold`. */
  const onboard = async (hint: string, wallets: Wallet[], threshold: number): Promise<string> => {
    const keys = wallets.map((w) => signingKey(w.publicKey) as SigningKey);
    const party = `${hint}::${wallets[0]!.fingerprint}`;
    const participant = { participantUid: f.sandbox.store.participant.participantId, permission: 2 };
    const transaction = partyToParticipantTransaction(party, 1, [participant], keys, threshold);
    const multiHash = topologyMultiHash([transaction]);
    await f.parties.AllocateExternalParty!({
      synchronizer,
      onboardingTransactions: [{ transaction }],
      multiHashSignatures: wallets.map((w) => w.sign(multiHash)),
    });
    return party;
  };

  const prepare = (party: string, commands: object[], extra: object = {}): Promise<Msg> =>
    interactive.PrepareSubmission!({
      userId: "wallet-user",
      commandId: next("cmd"),
      actAs: [party],
      commands,
      ...extra,
    });

  const executeRequest = (prepared: Msg, party: string, signatures: object[]) => ({
    preparedTransaction: prepared.preparedTransaction,
    partySignatures: { signatures: [{ party, signatures }] },
    submissionId: next("sub"),
    userId: "wallet-user",
    hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
  });

  const failureOf = async (promise: Promise<unknown>) => {
    const failure = await rejection(promise);
    return { code: failure.code, reason: failure.status.errorInfos[0]?.reason, message: failure.details };
  };

  before(async () => {
    f = await ledgerFixture();
    interactive = serviceClient(f.sandbox.port, INTERACTIVE);
    synchronizer = f.sandbox.store.synchronizers[0]!.id;
    alice = ed25519Wallet();
    aliceParty = await onboard("alice", [alice], 1);
  });
  after(async () => {
    interactive.close();
    await f.close();
  });

  it("prepares a create with its V2 hash, which the wallet recomputes from what it received", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "10")], {
      verboseHashing: true,
    });
    strictEqual(prepared.hashingSchemeVersion, "HASHING_SCHEME_VERSION_V2");
    const mine = hashPreparedTransactionV2(prepared.preparedTransaction).hash;
    deepStrictEqual(prepared.preparedTransactionHash, mine);
    const tx = prepared.preparedTransaction.transaction;
    strictEqual(tx.nodes.length, 1);
    strictEqual(tx.nodes[0].v1.create.templateId.entityName, "Iou");
    deepStrictEqual(prepared.preparedTransaction.metadata.submitterInfo.actAs, [aliceParty]);
    match(prepared.hashingDetails, /# Prepared Transaction/);
    ok(Number(prepared.costEstimation.totalTrafficCostEstimation) > 0);
    const withoutCost = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "1")], {
      estimateTrafficCost: { disabled: true },
    });
    strictEqual(withoutCost.costEstimation ?? null, null);
    // Nothing was committed by preparing.
    strictEqual(f.sandbox.store.updates.filter((u) => u.kind === "transaction").length, 0);
  });

  it("executes a signed create and a signed exercise with children, and waits for the transaction", async () => {
    const created = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "100")]);
    const waited: Msg = await interactive.ExecuteSubmissionAndWait!(
      executeRequest(created, aliceParty, [alice.sign(created.preparedTransactionHash)]),
    );
    match(waited.updateId, /^[0-9a-f]+$/);
    const update: Msg = await f.update.GetUpdateById!({
      updateId: waited.updateId,
      updateFormat: {
        includeTransactions: {
          eventFormat: { filtersByParty: { [aliceParty]: { cumulative: [] } }, verbose: true },
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    });
    const contractId = update.transaction.events[0].created.contractId;
    const split = await prepare(aliceParty, [
      {
        exercise: {
          templateId: IOU,
          contractId,
          choice: "Split",
          choiceArgument: v.record({ splitAmount: v.numeric("30") }),
        },
      },
    ]);
    const nodes = split.preparedTransaction.transaction.nodes;
    deepStrictEqual(nodes[0].v1.exercise.children, ["1", "2"]);
    deepStrictEqual(split.preparedTransaction.transaction.roots, ["0"]);
    strictEqual(split.preparedTransaction.metadata.inputContracts[0].v1.contractId, contractId);
    deepStrictEqual(hashPreparedTransactionV2(split.preparedTransaction).hash, split.preparedTransactionHash);
    const response: Msg = await interactive.ExecuteSubmissionAndWaitForTransaction!(
      executeRequest(split, aliceParty, [alice.sign(split.preparedTransactionHash)]),
    );
    const events = response.transaction.events;
    deepStrictEqual(response.transaction.externalTransactionHash, split.preparedTransactionHash);
    strictEqual(events.filter((e: Msg) => e.created).length, 2);
    strictEqual(events.filter((e: Msg) => e.archived).length, 1);
  });

  it("refuses an execution whose metadata lacks the input contracts the transaction uses", async () => {
    const created = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "12")]);
    const first: Msg = await interactive.ExecuteSubmissionAndWaitForTransaction!(
      executeRequest(created, aliceParty, [alice.sign(created.preparedTransactionHash)]),
    );
    const contractId = first.transaction.events[0].created.contractId;
    const transfer = await prepare(aliceParty, [
      {
        exercise: {
          templateId: IOU,
          contractId,
          choice: "Split",
          choiceArgument: v.record({ splitAmount: v.numeric("2") }),
        },
      },
    ]);
    const stripped = structuredClone(transfer.preparedTransaction);
    stripped.metadata.inputContracts = [];
    const signature = alice.sign(hashPreparedTransactionV2(stripped).hash);
    const failure = await failureOf(
      interactive.ExecuteSubmissionAndWait!(
        executeRequest({ preparedTransaction: stripped }, aliceParty, [signature]),
      ),
    );
    strictEqual(failure.reason, "FAILED_TO_EXECUTE_TRANSACTION");
    match(failure.message, new RegExp(`Missing input contracts: ${contractId}`));
  });

  it("refuses a tampered transaction: the recomputed hash is not what the party signed", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "5")]);
    const signature = alice.sign(prepared.preparedTransactionHash);
    const tampered = structuredClone(prepared);
    tampered.preparedTransaction.transaction.nodes[0].v1.create.argument.record.fields[3].value.numeric =
      "5000.0000000000";
    const failure = await failureOf(
      interactive.ExecuteSubmissionAndWait!(executeRequest(tampered, aliceParty, [signature])),
    );
    deepStrictEqual(
      [failure.code, failure.reason],
      [grpc.status.INVALID_ARGUMENT, "FAILED_TO_EXECUTE_TRANSACTION"],
    );
    match(
      failure.message,
      /Received 0 valid signatures from distinct keys \(1 invalid\), but expected at least 1 valid/,
    );
    // Signed after tampering: the signature holds, but it is not the transaction interpreted.
    const resigned = alice.sign(hashPreparedTransactionV2(tampered.preparedTransaction).hash);
    const forged = await failureOf(
      interactive.ExecuteSubmissionAndWait!(executeRequest(tampered, aliceParty, [resigned])),
    );
    strictEqual(forged.reason, "INVALID_EXTERNAL_TRANSACTION");
  });

  it("refuses a wrong signature, a signature by an unknown key and a missing party signature", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "6")]);
    const wrong = alice.sign(Buffer.from("not the hash"));
    const byWrong = await failureOf(
      interactive.ExecuteSubmission!(executeRequest(prepared, aliceParty, [wrong])),
    );
    strictEqual(byWrong.reason, "FAILED_TO_EXECUTE_TRANSACTION");
    match(byWrong.message, /Received 0 valid signatures from distinct keys \(1 invalid\)/);
    const stranger = p256Wallet().sign(prepared.preparedTransactionHash);
    const byStranger = await failureOf(
      interactive.ExecuteSubmission!(executeRequest(prepared, aliceParty, [stranger])),
    );
    match(byStranger.message, /Received 0 valid signatures from distinct keys \(1 invalid\)/);
    const nobody = await failureOf(
      interactive.ExecuteSubmission!({
        ...executeRequest(prepared, aliceParty, []),
        partySignatures: { signatures: [] },
      }),
    );
    match(nobody.message, /The following actAs parties did not provide an external signature: /);
  });

  it("needs threshold-many valid signatures of distinct keys", async () => {
    const first = ed25519Wallet();
    const second = p256Wallet();
    const party = await onboard("pair", [first, second], 2);
    const prepared = await prepare(party, [createIou(party, party, "7")]);
    const hash = prepared.preparedTransactionHash;
    const one = await failureOf(
      interactive.ExecuteSubmissionAndWait!(
        executeRequest(prepared, party, [first.sign(hash), first.sign(hash)]),
      ),
    );
    match(
      one.message,
      /Received 1 valid signatures from distinct keys \(0 invalid\), but expected at least 2 valid/,
    );
    const both: Msg = await interactive.ExecuteSubmissionAndWait!(
      executeRequest(prepared, party, [first.sign(hash), second.sign(hash)]),
    );
    match(both.updateId, /^[0-9a-f]+$/);
  });

  it("needs the signatures of every acting external party", async () => {
    const bob = p256Wallet();
    const bobParty = await onboard("bob", [bob], 1);
    const prepared: Msg = await interactive.PrepareSubmission!({
      userId: "wallet-user",
      commandId: next("cmd"),
      actAs: [aliceParty, bobParty],
      commands: [createIou(aliceParty, bobParty, "4")],
    });
    const hash = prepared.preparedTransactionHash;
    const request = (signatures: object[]) => ({
      ...executeRequest(prepared, aliceParty, []),
      partySignatures: { signatures },
    });
    const onlyAlice = await failureOf(
      interactive.ExecuteSubmissionAndWait!(request([{ party: aliceParty, signatures: [alice.sign(hash)] }])),
    );
    match(onlyAlice.message, new RegExp(`did not provide an external signature: ${bobParty}`));
    const both: Msg = await interactive.ExecuteSubmissionAndWait!(
      request([
        { party: aliceParty, signatures: [alice.sign(hash)] },
        { party: bobParty, signatures: [bob.sign(hash)] },
      ]),
    );
    match(both.updateId, /^[0-9a-f]+$/);
  });

  it("refuses a replay as a duplicate command", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "8")]);
    const request = executeRequest(prepared, aliceParty, [alice.sign(prepared.preparedTransactionHash)]);
    await interactive.ExecuteSubmissionAndWait!(request);
    const replay = await failureOf(
      interactive.ExecuteSubmissionAndWait!({ ...request, submissionId: next("sub") }),
    );
    deepStrictEqual([replay.code, replay.reason], [grpc.status.ALREADY_EXISTS, "DUPLICATE_COMMAND"]);
  });

  it("refuses expired ledger-time bounds and a passed max record time", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "9")]);
    const bounded = structuredClone(prepared.preparedTransaction);
    bounded.metadata.maxLedgerEffectiveTime = "1000000"; // one second after the epoch
    const hash = hashPreparedTransactionV2(bounded).hash;
    const outside = await failureOf(
      interactive.ExecuteSubmissionAndWait!(
        executeRequest({ preparedTransaction: bounded }, aliceParty, [alice.sign(hash)]),
      ),
    );
    deepStrictEqual(
      [outside.code, outside.reason],
      [grpc.status.INVALID_ARGUMENT, "LEDGER_TIME_OUTSIDE_BOUNDS"],
    );
    const late = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "9")], {
      maxRecordTime: { seconds: Math.floor(Date.now() / 1000) - 60, nanos: 0 },
    });
    const expired = await failureOf(
      interactive.ExecuteSubmissionAndWait!(
        executeRequest(late, aliceParty, [alice.sign(late.preparedTransactionHash)]),
      ),
    );
    deepStrictEqual(
      [expired.code, expired.reason],
      [grpc.status.ABORTED, "LOCAL_VERDICT_MAX_RECORD_TIME_EXCEEDED"],
    );
  });

  it("refuses a transaction on an unknown synchronizer as Canton does", async () => {
    const prepared = await prepare(aliceParty, [createIou(aliceParty, aliceParty, "3")]);
    const moved = structuredClone(prepared);
    moved.preparedTransaction.metadata.synchronizerId = "invalidSynchronizerId";
    const failure = await failureOf(
      interactive.ExecuteSubmissionAndWait!(
        executeRequest(moved, aliceParty, [alice.sign(prepared.preparedTransactionHash)]),
      ),
    );
    strictEqual(failure.reason, "INVALID_FIELD");
    match(
      failure.message,
      /Invalid field synchronizer_id: Unable to convert field `synchronizer_id`: Unable to parse `invalidSynchronizerId` as physical synchronizer id/,
    );
  });
});
