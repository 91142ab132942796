import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LedgerJson, type PackageSignatures } from "../../src/codec/index.js";
import { PackageSignatureIndex, ValueCodecError } from "../../src/lf/index.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { SAMPLE_PACKAGE_ID, samplePackageSignature } from "../../src/sandbox/sample-package/index.js";
import { overTheWire } from "./object/over-the-wire.js";

const V2 = "com.daml.ledger.api.v2";
const protos = ledgerApiProtos();

/** The sample package as the gateway's cache would hold it, counting what is asked of it. */
function signatures(): PackageSignatures & { ensured: string[][]; names: string[] } {
  const index = new PackageSignatureIndex([samplePackageSignature]);
  const ensured: string[][] = [];
  const names: string[] = [];
  return {
    ensured,
    names,
    resolveDataType: (id) => index.resolveDataType(id),
    resolveTemplate: (id) => index.resolveTemplate(id),
    resolveInterface: (id) => index.resolveInterface(id),
    has: (id) => id === SAMPLE_PACKAGE_ID,
    ensure: async (ids) => {
      ensured.push([...ids]);
    },
    resolvePackageName: async (name, party) => {
      names.push(`${name}/${party}`);
      return SAMPLE_PACKAGE_ID;
    },
  };
}

const iouId = { packageId: SAMPLE_PACKAGE_ID, moduleName: "Iou", entityName: "Iou" };
const iouArguments = {
  fields: [
    { value: { party: "bank::1220" } },
    { value: { party: "alice::1220" } },
    { value: { text: "EUR" } },
    { value: { numeric: "10.5000000000" } },
    { value: { list: { elements: [{ party: "bob::1220" }] } } },
  ],
};

/** An Event of a created Iou, as the ledger would send it. */
const createdIou = {
  created: {
    offset: "12",
    nodeId: 0,
    contractId: "00abc",
    templateId: iouId,
    createArguments: iouArguments,
    witnessParties: ["alice::1220"],
    signatories: ["bank::1220"],
    observers: ["alice::1220", "bob::1220"],
    createdAt: { seconds: "1700000000", nanos: 0 },
    packageName: "gateway-samples",
    representativePackageId: SAMPLE_PACKAGE_ID,
    acsDelta: true,
  },
};

describe("LedgerJson: events to JSON", () => {
  it("writes a created event with its typed payload under createArgument", async () => {
    const json = new LedgerJson(protos.root, signatures());
    const event = overTheWire(`${V2}.Event`, createdIou);
    const out = (await json.toJson(`${V2}.Event`, event, "t")) as { CreatedEvent: Record<string, unknown> };
    assert.deepEqual(Object.keys(out), ["CreatedEvent"]);
    const created = out.CreatedEvent;
    assert.equal(created.templateId, `${SAMPLE_PACKAGE_ID}:Iou:Iou`);
    assert.deepEqual(created.createArgument, {
      issuer: "bank::1220",
      owner: "alice::1220",
      currency: "EUR",
      amount: "10.5000000000",
      observers: ["bob::1220"],
    });
    assert.equal(created.offset, 12);
    assert.equal(created.createdAt, "2023-11-14T22:13:20Z");
    assert.equal("createArguments" in created, false);
    // Iou has no key: null, as Canton writes an absent Option.
    assert.equal(created.contractKey, null);
  });

  it("types exercise arguments and results through the choice signature", async () => {
    const json = new LedgerJson(protos.root, signatures());
    const event = overTheWire(`${V2}.Event`, {
      exercised: {
        offset: "13",
        nodeId: 0,
        contractId: "00abc",
        templateId: iouId,
        choice: "Split",
        choiceArgument: { record: { fields: [{ value: { numeric: "2.0000000000" } }] } },
        actingParties: ["alice::1220"],
        consuming: true,
        witnessParties: ["alice::1220"],
        lastDescendantNodeId: 2,
        exerciseResult: {
          record: { fields: [{ value: { contractId: "00c1" } }, { value: { contractId: "00c2" } }] },
        },
        packageName: "gateway-samples",
        acsDelta: true,
      },
    });
    const out = (await json.toJson(`${V2}.Event`, event, "t")) as { ExercisedEvent: Record<string, unknown> };
    assert.deepEqual(out.ExercisedEvent.choiceArgument, { splitAmount: "2.0000000000" });
    assert.deepEqual(out.ExercisedEvent.exerciseResult, { splitCid: "00c1", restCid: "00c2" });
    assert.equal(out.ExercisedEvent.lastDescendantNodeId, 2);
  });

  it("loads the signatures of unknown packages before writing", async () => {
    const sigs = signatures();
    const json = new LedgerJson(protos.root, sigs);
    const archived = overTheWire(`${V2}.Event`, {
      archived: {
        offset: "1",
        nodeId: 0,
        contractId: "00",
        templateId: { ...iouId, packageId: "other" },
        witnessParties: ["a::1"],
      },
    });
    assert.deepEqual(json.missingPackages(`${V2}.Event`, archived), ["other"]);
    await json.toJson(`${V2}.Event`, archived, "t");
    assert.deepEqual(sigs.ensured, [["other"]]);
  });
});

describe("LedgerJson: commands from JSON", () => {
  it("types create arguments, resolving #package-name for the first actAs party", async () => {
    const sigs = signatures();
    const json = new LedgerJson(protos.root, sigs);
    const request = (await json.fromJson(
      `${V2}.Commands`,
      {
        commandId: "c1",
        actAs: ["alice::1220"],
        commands: [
          {
            CreateCommand: {
              templateId: "#gateway-samples:Iou:Iou",
              createArguments: {
                issuer: "bank::1220",
                owner: "alice::1220",
                currency: "EUR",
                amount: 10,
                observers: [],
              },
            },
          },
        ],
      },
      "t",
    )) as {
      commands: { create: { templateId: unknown; createArguments: { fields: { value: unknown }[] } } }[];
    };
    const create = request.commands[0]?.create;
    // The #name form is what goes to the ledger; the signature came from the resolved package.
    assert.deepEqual(create?.templateId, {
      packageId: "#gateway-samples",
      moduleName: "Iou",
      entityName: "Iou",
    });
    assert.deepEqual(create?.createArguments.fields[3]?.value, { numeric: "10.0000000000" });
    assert.deepEqual(sigs.names, ["gateway-samples/alice::1220"]);
  });

  it("takes a #package-name preference the cache holds at once, and asks for one it does not", async () => {
    const iouCommand = (templateId: string) => ({
      commandId: "c1",
      actAs: ["alice::1220"],
      commands: [
        {
          CreateCommand: {
            templateId,
            createArguments: {
              issuer: "bank::1220",
              owner: "alice::1220",
              currency: "EUR",
              amount: 10,
              observers: [],
            },
          },
        },
      ],
    });
    const asked = signatures();
    const expected = await new LedgerJson(protos.root, asked).fromJson(
      `${V2}.Commands`,
      iouCommand("#gateway-samples:Iou:Iou"),
      "t",
    );
    const held: string[] = [];
    const holding = {
      ...signatures(),
      preferredPackageNow: (name: string, party: string) => {
        held.push(`${name}/${party}`);
        return name === "gateway-samples" ? SAMPLE_PACKAGE_ID : undefined;
      },
    };
    const json = new LedgerJson(protos.root, holding);
    const request = await json.fromJson(`${V2}.Commands`, iouCommand("#gateway-samples:Iou:Iou"), "t");
    assert.deepEqual(request, expected);
    assert.deepEqual(held, ["gateway-samples/alice::1220"]);
    assert.deepEqual(holding.names, []);
    // A package id as given, held: nothing asked either way.
    await json.fromJson(`${V2}.Commands`, iouCommand(`${SAMPLE_PACKAGE_ID}:Iou:Iou`), "t");
    assert.deepEqual(holding.names, []);
    // A name without a preference held goes to resolvePackageName.
    await json.fromJson(`${V2}.Commands`, iouCommand("#other-package:Iou:Iou"), "t");
    assert.deepEqual(holding.names, ["other-package/alice::1220"]);
  });

  it("names the JSON path of an ill-typed value", async () => {
    const json = new LedgerJson(protos.root, signatures());
    await assert.rejects(
      json.fromJson(
        `${V2}.SubmitAndWaitForTransactionRequest`,
        {
          commands: {
            commandId: "c2",
            actAs: ["alice::1220"],
            commands: [
              {
                ExerciseCommand: {
                  templateId: `${SAMPLE_PACKAGE_ID}:Iou:Iou`,
                  contractId: "00abc",
                  choice: "Split",
                  choiceArgument: { splitAmount: true },
                },
              },
            ],
          },
        },
        "t",
      ),
      (error: unknown) =>
        error instanceof ValueCodecError &&
        error.message ===
          "commands.commands[0].ExerciseCommand.choiceArgument.splitAmount: expected Numeric, got true",
    );
  });
});

describe("LedgerJson: wire bytes to JSON text", () => {
  const eventType = protos.type(`${V2}.Event`);
  const bytes = Buffer.from(eventType.encode(eventType.fromObject(createdIou)).finish());

  /** The sample package, held only once `ensure` loaded it (or never, with `loads: false`). */
  function loading(loads = true): PackageSignatures & { asked: [string[], string | undefined][] } {
    const base = signatures();
    const asked: [string[], string | undefined][] = [];
    let held = false;
    return {
      ...base,
      asked,
      has: (id) => held && id === SAMPLE_PACKAGE_ID,
      ensure: async (ids, token) => {
        asked.push([[...ids], token]);
        held = loads;
      },
    };
  }

  it("loads a package the message names with the caller's token, then answers without a Promise", async () => {
    const sigs = loading();
    const toText = new LedgerJson(protos.root, sigs).wireText(`${V2}.Event`);
    const first = toText(bytes, "alice-token");
    assert.ok(first instanceof Promise, "the first element waits for its package");
    const text = await first;
    assert.deepEqual(sigs.asked, [[[SAMPLE_PACKAGE_ID], "alice-token"]]);
    const reference = await new LedgerJson(protos.root, signatures()).toJson(
      `${V2}.Event`,
      overTheWire(`${V2}.Event`, createdIou),
      "t",
    );
    assert.deepEqual(JSON.parse(text), reference);
    assert.equal(toText(bytes, "alice-token"), text, "the next one is written at once");
    assert.equal(sigs.asked.length, 1);
  });

  it("fails with the missing package when loading did not bring it", async () => {
    const toText = new LedgerJson(protos.root, loading(false)).wireText(`${V2}.Event`);
    await assert.rejects(
      async () => toText(bytes, "t"),
      (error: Error & { packageIds?: string[] }) =>
        error.name === "MissingPackagesError" && error.packageIds?.join() === SAMPLE_PACKAGE_ID,
    );
  });
});
