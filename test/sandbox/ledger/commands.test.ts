import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { rejection } from "../sandbox-client.js";
import {
  ACCOUNT,
  ASSET,
  accountArgs,
  commands,
  createdOf,
  createIou,
  exercise,
  IOU,
  id,
  iouArgs,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  submitTx,
  txFormat,
  v,
  wildcard,
} from "./ledger-fixture.js";

describe("sandbox ledger: commands", () => {
  let f: LedgerFixture;
  let bank: string;
  let alice: string;
  let bob: string;
  before(async () => {
    f = await ledgerFixture();
    bank = await f.allocate("bank");
    alice = await f.allocate("alice");
    bob = await f.allocate("bob");
  });
  after(() => f.close());

  const issue = async (owner = alice, amount = "100", currency = "USD", observers: string[] = []) =>
    createdOf(await submitTx(f, [bank], [createIou(bank, owner, amount, currency, observers)]))[0];

  const errorOf = async (promise: Promise<unknown>) => {
    const error = await rejection(promise);
    return { error, reason: error.status.errorInfos[0]?.reason };
  };

  it("creates a contract with the model's signatories and observers and a 00-hex contract id", async () => {
    const created = await issue(alice, "100", "USD", [bob]);
    match(created.contractId, /^00[0-9a-f]{64}$/);
    deepStrictEqual(created.signatories, [bank]);
    deepStrictEqual(created.observers, [alice, bob]);
    strictEqual(created.packageName, "gateway-samples");
    strictEqual(created.nodeId, 0);
    strictEqual(created.createArguments.fields[3].value.numeric, "100.0000000000");
  });

  it("answers SubmitAndWait with the update id and the completion offset", async () => {
    const response = await f.command.SubmitAndWait!(commands([bank], [createIou(bank, alice, "5")]));
    match(response.updateId as string, /^1220[0-9a-f]{64}$/);
    deepStrictEqual(await f.state.GetLedgerEnd!({}), { offset: response.completionOffset });
  });

  it("exercises Split: a consuming exercise with two created children and its result", async () => {
    const iou = await issue(alice, "100");
    const tx = await submitTx(
      f,
      [alice],
      [exercise(IOU, iou.contractId, "Split", v.record({ splitAmount: v.numeric("30") }))],
    );
    const [root, split, rest] = tx.events;
    strictEqual(root.exercised.consuming, true);
    strictEqual(root.exercised.nodeId, 0);
    strictEqual(root.exercised.lastDescendantNodeId, 2);
    deepStrictEqual(root.exercised.actingParties, [alice]);
    strictEqual(split.created.nodeId, 1);
    strictEqual(split.created.createArguments.fields[3].value.numeric, "30.0000000000");
    strictEqual(rest.created.createArguments.fields[3].value.numeric, "70.0000000000");
    const result = root.exercised.exerciseResult.record.fields;
    deepStrictEqual(
      result.map((field: Msg) => [field.label, field.value.contractId]),
      [
        ["splitCid", split.created.contractId],
        ["restCid", rest.created.contractId],
      ],
    );
  });

  it("exercises Transfer, AddObserver and Merge (which archives the other Iou)", async () => {
    const iou = await issue(alice, "10");
    const transferred = createdOf(
      await submitTx(
        f,
        [alice],
        [exercise(IOU, iou.contractId, "Transfer", v.record({ newOwner: v.party(bob) }))],
      ),
    )[0];
    strictEqual(transferred.createArguments.fields[1].value.party, bob);
    const observed = createdOf(
      await submitTx(
        f,
        [bob],
        [exercise(IOU, transferred.contractId, "AddObserver", v.record({ newObserver: v.party(alice) }))],
      ),
    )[0];
    deepStrictEqual(observed.observers, [bob, alice]);
    const other = await issue(bob, "5");
    const merge = await submitTx(
      f,
      [bob],
      [exercise(IOU, observed.contractId, "Merge", v.record({ otherCid: { contractId: other.contractId } }))],
    );
    const kinds = merge.events.map((e: Msg) => (e.created ? "created" : `${e.exercised.choice}`));
    deepStrictEqual(kinds, ["Merge", "Archive", "created"]);
    strictEqual(merge.events[2].created.createArguments.fields[3].value.numeric, "15.0000000000");
  });

  it("fails Merge of different currencies with UNHANDLED_EXCEPTION", async () => {
    const usd = await issue(alice, "1", "USD");
    const eur = await issue(alice, "1", "EUR");
    const { error, reason } = await errorOf(
      f.command.SubmitAndWait!(
        commands(
          [alice],
          [exercise(IOU, usd.contractId, "Merge", v.record({ otherCid: { contractId: eur.contractId } }))],
        ),
      ),
    );
    strictEqual(reason, "UNHANDLED_EXCEPTION");
    strictEqual(error.code, grpc.status.FAILED_PRECONDITION);
  });

  it("runs CreateAndExercise in one transaction (a transient contract)", async () => {
    const tx = await submitTx(
      f,
      [bank, alice],
      [
        {
          createAndExercise: {
            templateId: IOU,
            createArguments: iouArgs(bank, alice, "3"),
            choice: "Archive",
            choiceArgument: v.unit(),
          },
        },
      ],
    );
    deepStrictEqual(
      tx.events.map((e: Msg) => [e.created ? "created" : "exercised", (e.created ?? e.exercised).acsDelta]),
      [
        ["created", false],
        ["exercised", false],
      ],
    );
  });

  it("exercises an interface choice through the interface id (nonconsuming Describe)", async () => {
    const iou = await issue(alice, "7", "CHF");
    const tx = await submitTx(f, [alice], [exercise(ASSET, iou.contractId, "Describe", v.unit())]);
    const event = tx.events[0].exercised;
    deepStrictEqual(event.interfaceId, ASSET);
    deepStrictEqual(event.templateId, IOU);
    strictEqual(event.consuming, false);
    strictEqual(event.exerciseResult.text, `7.0000000000 CHF issued by ${bank}`);
  });

  it("resolves #gateway-samples package-name identifiers", async () => {
    const tx = await submitTx(
      f,
      [bank],
      [
        {
          create: {
            templateId: id("Iou", "Iou", "#gateway-samples"),
            createArguments: iouArgs(bank, alice, "1"),
          },
        },
      ],
    );
    deepStrictEqual(createdOf(tx)[0].templateId, IOU);
  });

  it("is atomic: a failing command rejects the whole submission and commits nothing", async () => {
    const before = (await f.state.GetLedgerEnd!({})).offset;
    const { reason } = await errorOf(
      f.command.SubmitAndWait!(commands([bank], [createIou(bank, alice, "1"), createIou(bank, alice, "0")])),
    );
    strictEqual(reason, "TEMPLATE_PRECONDITION_VIOLATED");
    deepStrictEqual((await f.state.GetLedgerEnd!({})).offset, before);
  });

  it("rejects a violated ensure clause with TEMPLATE_PRECONDITION_VIOLATED", async () => {
    const { error, reason } = await errorOf(
      f.command.SubmitAndWait!(commands([bank], [createIou(bank, alice, "-1")])),
    );
    strictEqual(reason, "TEMPLATE_PRECONDITION_VIOLATED");
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    match(error.details, /ensure amount > 0.0/);
  });

  it("rejects a create without its signatory in actAs with DAML_AUTHORIZATION_ERROR", async () => {
    const { error, reason } = await errorOf(
      f.command.SubmitAndWait!(commands([alice], [createIou(bank, alice, "1")])),
    );
    strictEqual(reason, "DAML_AUTHORIZATION_ERROR");
    match(error.details, /requires authorizers .*bank.*, but only .*alice.* were given/);
  });

  it("rejects an exercise by a non-controller with DAML_AUTHORIZATION_ERROR", async () => {
    const iou = await issue(alice, "1", "USD", [bob]);
    const { reason } = await errorOf(
      f.command.SubmitAndWait!(
        commands([bob], [exercise(IOU, iou.contractId, "Transfer", v.record({ newOwner: v.party(bob) }))]),
      ),
    );
    strictEqual(reason, "DAML_AUTHORIZATION_ERROR");
  });

  it("accepts a multi-party submission whose actAs covers all signatories and controllers", async () => {
    const tx = await submitTx(
      f,
      [bank, alice],
      [
        createIou(bank, alice, "2"),
        {
          create: {
            templateId: ACCOUNT,
            createArguments: accountArgs(bank, alice, `multi-${Date.now()}`, "0"),
          },
        },
      ],
    );
    strictEqual(createdOf(tx).length, 2);
  });

  it("hides contracts from parties that are not stakeholders: CONTRACT_NOT_FOUND, unless readAs sees them", async () => {
    const iou = await issue(alice, "1");
    const { error, reason } = await errorOf(
      f.command.SubmitAndWait!(commands([bob], [exercise(IOU, iou.contractId, "Archive", v.unit())])),
    );
    strictEqual(reason, "CONTRACT_NOT_FOUND");
    deepStrictEqual(error.status.resourceInfos[0], {
      resourceType: "CONTRACT_ID",
      resourceName: iou.contractId,
      owner: "",
      description: "",
    });
    // Visible through readAs, but Archive needs the signatory: now it is an authorization error.
    const seen = await errorOf(
      f.command.SubmitAndWait!(
        commands([bob], [exercise(IOU, iou.contractId, "Archive", v.unit())], { readAs: [alice] }),
      ),
    );
    strictEqual(seen.reason, "DAML_AUTHORIZATION_ERROR");
  });

  it("keeps keys unique among active contracts and exercises by key", async () => {
    const number = `acc-${Date.now()}`;
    const account = {
      create: { templateId: ACCOUNT, createArguments: accountArgs(bank, alice, number, "10") },
    };
    const created = createdOf(await submitTx(f, [bank], [account]))[0];
    deepStrictEqual(
      created.contractKey.record.fields.map((x: Msg) => x.label),
      ["bank", "number"],
    );
    strictEqual(created.contractKeyHash.length, 32);
    const { reason } = await errorOf(f.command.SubmitAndWait!(commands([bank], [account])));
    strictEqual(reason, "DUPLICATE_CONTRACT_KEY");
    const key = v.record({ bank: v.party(bank), number: v.text(number) });
    const byKey = (choice: string, argument: object) => ({
      exerciseByKey: { templateId: ACCOUNT, contractKey: key, choice, choiceArgument: argument },
    });
    const balance = await submitTx(f, [alice], [byKey("GetBalance", v.unit())]);
    strictEqual(balance.events[0].exercised.exerciseResult.numeric, "10.0000000000");
    const deposit = await submitTx(f, [alice], [byKey("Deposit", v.record({ amount: v.numeric("5") }))]);
    strictEqual(createdOf(deposit)[0].createArguments.fields[3].value.numeric, "15.0000000000");
    const after = await submitTx(f, [alice], [byKey("GetBalance", v.unit())]);
    strictEqual(after.events[0].exercised.exerciseResult.numeric, "15.0000000000");
    const missing = await errorOf(
      f.command.SubmitAndWait!(
        commands(
          [alice],
          [
            {
              exerciseByKey: {
                templateId: ACCOUNT,
                contractKey: v.record({ bank: v.party(bank), number: v.text("nope") }),
                choice: "GetBalance",
                choiceArgument: v.unit(),
              },
            },
          ],
        ),
      ),
    );
    strictEqual(missing.reason, "CONTRACT_KEY_NOT_FOUND");
  });

  it("accepts a disclosed contract from a created event blob and rejects a tampered blob", async () => {
    const response = await f.command.SubmitAndWaitForTransaction!({
      ...commands([bank], [createIou(bank, alice, "9")]),
      transactionFormat: txFormat(wildcard([bank], true), "TRANSACTION_SHAPE_ACS_DELTA"),
    });
    const created = (response.transaction as Msg).events[0].created;
    ok(created.createdEventBlob.length > 0);
    // Bob is no stakeholder: without disclosure the contract is invisible to him.
    const describe = [exercise(ASSET, created.contractId, "Describe", v.unit())];
    const hidden = await errorOf(f.command.SubmitAndWait!(commands([bob], describe)));
    strictEqual(hidden.reason, "CONTRACT_NOT_FOUND");
    const disclosed = {
      templateId: IOU,
      contractId: created.contractId,
      createdEventBlob: created.createdEventBlob,
      synchronizerId: "",
    };
    // Every choice of gateway-samples is controlled by a stakeholder, and every contract is known to
    // this one participant: here disclosure adds no visibility, the test proves acceptance and checks.
    const tx = await submitTx(f, [alice], describe, { disclosedContracts: [disclosed] });
    strictEqual(tx.events[0].exercised.choice, "Describe");
    const tampered = Buffer.from(created.createdEventBlob);
    const at = tampered.length - 3;
    tampered.writeUInt8(tampered.readUInt8(at) ^ 1, at);
    const rejected = await errorOf(
      f.command.SubmitAndWait!(
        commands([bob], describe, { disclosedContracts: [{ ...disclosed, createdEventBlob: tampered }] }),
      ),
    );
    strictEqual(rejected.reason, "DISCLOSED_CONTRACT_AUTHENTICATION_FAILED");
    const wrongId = await errorOf(
      f.command.SubmitAndWait!(
        commands([bob], describe, {
          disclosedContracts: [{ ...disclosed, contractId: `00${"1".repeat(64)}` }],
        }),
      ),
    );
    strictEqual(wrongId.reason, "DISCLOSED_CONTRACT_AUTHENTICATION_FAILED");
  });

  it("deduplicates by user, actAs and command id: DUPLICATE_COMMAND with the earlier completion offset", async () => {
    const request = commands([bank], [createIou(bank, alice, "1")]);
    const first = await f.command.SubmitAndWait!(request);
    const { error, reason } = await errorOf(f.command.SubmitAndWait!(request));
    strictEqual(reason, "DUPLICATE_COMMAND");
    strictEqual(error.code, grpc.status.ALREADY_EXISTS);
    strictEqual(error.status.errorInfos[0]?.metadata.completion_offset, first.completionOffset);
    // Another submission id is no new command; another command id is.
    const again = await errorOf(
      f.command.SubmitAndWait!({ commands: { ...request.commands, submissionId: "other" } }),
    );
    strictEqual(again.reason, "DUPLICATE_COMMAND");
    // A deduplication offset at the first completion no longer sees it.
    const afterOffset = await f.command.SubmitAndWait!({
      commands: { ...request.commands, deduplicationOffset: first.completionOffset },
    });
    ok(Number(afterOffset.completionOffset) > Number(first.completionOffset));
    // A zero-length duration window does not deduplicate either.
    const zero = await f.command.SubmitAndWait!({
      commands: { ...request.commands, deduplicationDuration: { seconds: "0", nanos: 0 } },
    });
    ok(Number(zero.completionOffset) > Number(afterOffset.completionOffset));
  });

  it("defaults the user id from the token and requires a command id", async () => {
    const { commands: body } = commands([bank], [createIou(bank, alice, "1")]);
    const response = await f.command.SubmitAndWait!({ commands: { ...body, userId: "" } });
    ok(Number(response.completionOffset) > 0);
    const missing = await errorOf(f.command.SubmitAndWait!({ commands: { ...body, commandId: "" } }));
    strictEqual(missing.reason, "MISSING_FIELD");
    strictEqual(missing.error.status.errorInfos[0]?.metadata.field_name, "command_id");
  });

  it("fails a command on a template without a native model with FAILED_PRECONDITION", async () => {
    const { error, reason } = await errorOf(
      f.command.SubmitAndWait!(
        commands(
          [bank],
          [
            {
              create: { templateId: id("Other", "Thing", "ab".repeat(32)), createArguments: { fields: [] } },
            },
          ],
        ),
      ),
    );
    strictEqual(reason, "SANDBOX_NO_NATIVE_MODEL");
    strictEqual(error.code, grpc.status.FAILED_PRECONDITION);
  });

  it("round-trips every value type through Types:AllTypes Echo", async () => {
    const allTypes = v.record({
      owner: v.party(alice),
      int: v.int64(-42),
      num: v.numeric("1.5"),
      text: v.text("hi"),
      flag: { bool: true },
      date: { date: 19000 },
      time: { timestamp: "1700000000000000" },
      party: v.party(bob),
      cid: { optional: { value: null } },
      opt: { optional: { value: v.int64(7) } },
      nested: { optional: { value: { optional: { value: v.text("deep") } } } },
      list: v.list(v.text("a"), v.text("b")),
      textMap: { textMap: { entries: [{ key: "k", value: v.int64(1) }] } },
      genMap: { genMap: { entries: [{ key: v.party(alice), value: v.int64(2) }] } },
      color: { enum: { constructor: "Green" } },
      shape: { variant: { constructor: "Circle", value: v.numeric("2") } },
      pair: v.record({ first: v.int64(1), second: v.text("one") }),
      unit: { unit: {} },
    });
    const created = createdOf(
      await submitTx(
        f,
        [alice],
        [{ create: { templateId: id("Types", "AllTypes"), createArguments: allTypes.record } }],
      ),
    )[0];
    const tx = await submitTx(
      f,
      [alice],
      [exercise(id("Types", "AllTypes"), created.contractId, "Echo", v.record({ value: allTypes }))],
    );
    const echoed = tx.events[0].exercised.exerciseResult.record.fields;
    deepStrictEqual(
      echoed.map((field: Msg) => field.label),
      [
        "owner",
        "int",
        "num",
        "text",
        "flag",
        "date",
        "time",
        "party",
        "cid",
        "opt",
        "nested",
        "list",
        "textMap",
        "genMap",
        "color",
        "shape",
        "pair",
        "unit",
      ],
    );
    strictEqual(echoed[2].value.numeric, "1.5000000000");
    strictEqual(echoed[10].value.optional.value.optional.value.text, "deep");
    strictEqual(echoed[14].value.enum.constructor, "Green");
  });
});
