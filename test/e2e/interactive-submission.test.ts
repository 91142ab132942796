import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import type { PreparedTransaction__Output } from "../../src/proto/ledger-api-types.js";
import { hashPreparedTransactionV2 } from "../../src/sandbox/interactive/prepared-transaction-hash.js";
import { ed25519Wallet, type Wallet } from "../sandbox/interactive/wallet.js";
import { type Stack, startStack } from "../support/stack.js";
import { jsonSignature, onboardExternalParty } from "./external-wallet.js";
import { call, IOU, userFor, wsStream } from "./ledger-client.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads loosely typed JSON answers
type Json = Record<string, any>;

/** The PreparedTransaction message, as a wallet decodes the bytes it is given. */
const PREPARED = ledgerApiProtos().type("com.daml.ledger.api.v2.interactive.PreparedTransaction");
const OBJECTS = { longs: String, enums: String, defaults: true, oneofs: true, arrays: true, objects: true };
const decode = (base64: string) =>
  PREPARED.toObject(PREPARED.decode(Buffer.from(base64, "base64")), OBJECTS) as PreparedTransaction__Output;
const encode = (prepared: PreparedTransaction__Output) =>
  Buffer.from(PREPARED.encode(PREPARED.fromObject(prepared)).finish()).toString("base64");

describe("external party and interactive submission through the gateway (JSON over real sockets)", () => {
  let stack: Stack;
  let wallet: Wallet;
  let party: string;
  let userToken: string;
  let counter = 0;
  const next = (prefix: string) => `${prefix}-${++counter}`;

  const iou = (amount: string) => ({
    CreateCommand: {
      templateId: IOU,
      createArguments: { issuer: party, owner: party, currency: "EUR", amount, observers: [] },
    },
  });
  const prepare = async (commands: object[]) => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/interactive-submission/prepare",
      { commandId: next("cmd"), actAs: [party], commands },
      userToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body;
  };
  /** What a careful wallet does: recompute the hash from the bytes and refuse to sign a mismatch. */
  const signPrepared = (prepared: Json) => {
    const mine = hashPreparedTransactionV2(decode(prepared.preparedTransaction)).hash;
    assert.equal(mine.toString("base64"), prepared.preparedTransactionHash, "the wallet's own hash");
    return jsonSignature(wallet, mine);
  };
  const execute = (
    path: string,
    preparedTransaction: string,
    signature: object,
    submissionId = next("sub"),
  ) =>
    call<Json>(
      stack,
      "POST",
      `/v2/interactive-submission/${path}`,
      {
        preparedTransaction,
        partySignatures: { signatures: [{ party, signatures: [signature] }] },
        submissionId,
        hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
        deduplicationPeriod: { Empty: {} },
      },
      userToken,
    );

  before(async () => {
    stack = await startStack();
    wallet = ed25519Wallet();
    userToken = await userFor(stack, "wallet-user", []);
    const synchronizers = await call<Json>(stack, "GET", "/v2/state/connected-synchronizers");
    const synchronizer = synchronizers.body.connectedSynchronizers[0].synchronizerId;
    const onboarded = await onboardExternalParty(stack, wallet, synchronizer, "wallet", "wallet-user");
    party = onboarded.party;
    assert.equal(party, `wallet::${wallet.fingerprint}`);
    assert.equal(onboarded.allocated.partyId, party);
  });
  after(() => stack.stop());

  it("prepares a create, the wallet signs its own hash, execute-and-wait commits it to the party's updates", async () => {
    const prepared = await prepare([iou("100")]);
    assert.equal(prepared.hashingSchemeVersion, "HASHING_SCHEME_VERSION_V2");
    assert.equal(typeof prepared.preparedTransaction, "string");
    assert.equal(typeof prepared.costEstimation.totalTrafficCostEstimation, "number");
    const executed = await execute("executeAndWait", prepared.preparedTransaction, signPrepared(prepared));
    assert.equal(executed.status, 200, JSON.stringify(executed.body));
    const request = {
      beginExclusive: 0,
      endInclusive: executed.body.completionOffset,
      updateFormat: {
        includeTransactions: {
          eventFormat: { filtersByParty: { [party]: { cumulative: [] } }, verbose: true },
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    };
    const updates = await call<Json[]>(stack, "POST", "/v2/updates", request, userToken);
    assert.equal(updates.status, 200, JSON.stringify(updates.body));
    const transaction = updates.body.map((u) => u.update.Transaction?.value).find((t) => t);
    assert.equal(transaction.updateId, executed.body.updateId);
    assert.equal(transaction.externalTransactionHash, prepared.preparedTransactionHash);
    const created = transaction.events[0].CreatedEvent;
    assert.equal(created.createArgument.amount, "100.0000000000");
    assert.deepEqual(created.signatories, [party]);
    // The party's update stream over a WebSocket shows the same.
    const streamed = await wsStream(stack, "/v2/updates", request, userToken);
    assert.equal(streamed.code, 1000);
    assert.deepEqual(streamed.frames, updates.body);
  });

  it("prepares an exercise with children and executes it, answering the transaction", async () => {
    const created = await prepare([iou("50")]);
    const first = await execute(
      "executeAndWaitForTransaction",
      created.preparedTransaction,
      signPrepared(created),
    );
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const contractId = first.body.transaction.events[0].CreatedEvent.contractId;
    const split = await prepare([
      {
        ExerciseCommand: {
          templateId: IOU,
          contractId,
          choice: "Split",
          choiceArgument: { splitAmount: "20" },
        },
      },
    ]);
    const decoded = decode(split.preparedTransaction);
    assert.deepEqual(decoded.transaction?.nodes[0]?.v1?.exercise?.children, ["1", "2"]);
    const reply = await execute(
      "executeAndWaitForTransaction",
      split.preparedTransaction,
      signPrepared(split),
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const amounts = reply.body.transaction.events
      .filter((e: Json) => e.CreatedEvent)
      .map((e: Json) => e.CreatedEvent.createArgument.amount);
    assert.deepEqual(amounts.sort(), ["20.0000000000", "30.0000000000"]);
  });

  it("refuses a tampered transaction and a wrong signature with Canton's error", async () => {
    const prepared = await prepare([iou("7")]);
    const signature = signPrepared(prepared);
    const tampered = decode(prepared.preparedTransaction);
    const argument = tampered.transaction?.nodes[0]?.v1?.create?.argument as Json;
    argument.record.fields[3].value.numeric = "7000.0000000000";
    const refused = await execute("executeAndWait", encode(tampered), signature);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, "FAILED_TO_EXECUTE_TRANSACTION");
    assert.match(refused.body.cause, /Received 0 valid signatures from distinct keys \(1 invalid\)/);
    const wrong = await execute(
      "executeAndWait",
      prepared.preparedTransaction,
      jsonSignature(wallet, Buffer.from("x")),
    );
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, "FAILED_TO_EXECUTE_TRANSACTION");
  });

  it("refuses a replay as a duplicate and plain submit-and-wait acting as the external party", async () => {
    const prepared = await prepare([iou("8")]);
    const signature = signPrepared(prepared);
    assert.equal((await execute("execute", prepared.preparedTransaction, signature)).status, 200);
    const replay = await execute("executeAndWait", prepared.preparedTransaction, signature);
    assert.equal(replay.status, 409);
    assert.equal(replay.body.code, "DUPLICATE_COMMAND");
    const plain = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      { commandId: next("plain"), actAs: [party], commands: [iou("1")] },
      userToken,
    );
    assert.equal(plain.status, 404);
    assert.equal(plain.body.code, "NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT");
  });

  it("needs read rights on the submitters to prepare and act or execute rights to execute", async () => {
    const strangerToken = await userFor(stack, "stranger", []);
    const refused = await call<Json>(
      stack,
      "POST",
      "/v2/interactive-submission/prepare",
      { commandId: next("cmd"), actAs: [party], commands: [iou("1")] },
      strangerToken,
    );
    // Canton redacts permission errors (code "NA", the request id only).
    assert.equal(refused.status, 403);
    const prepared = await prepare([iou("2")]);
    const executed = await call<Json>(
      stack,
      "POST",
      "/v2/interactive-submission/executeAndWait",
      {
        preparedTransaction: prepared.preparedTransaction,
        partySignatures: { signatures: [{ party, signatures: [signPrepared(prepared)] }] },
        submissionId: next("sub"),
        hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
      },
      strangerToken,
    );
    assert.equal(executed.status, 403);
  });

  it("answers 400 Invalid value for a prepared transaction that is not base64 protobuf", async () => {
    const reply = await execute("executeAndWait", "%%%", { format: "SIGNATURE_FORMAT_RAW" });
    assert.equal(reply.status, 400);
    assert.match(String(reply.body), /^Invalid value for: body/);
  });
});
