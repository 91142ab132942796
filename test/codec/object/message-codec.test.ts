import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidJsonError } from "../../../src/codec/object/json-path.js";
import { MessageCodec } from "../../../src/codec/object/message-codec.js";
import { isoToTimestamp, timestampToIso } from "../../../src/codec/rules/timestamps.js";
import { PackageSignatureIndex, ValueCodec } from "../../../src/lf/index.js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import { overTheWire } from "./over-the-wire.js";

const protos = ledgerApiProtos();
const codec = new MessageCodec(protos.root, new ValueCodec(new PackageSignatureIndex([])));
const V2 = "com.daml.ledger.api.v2";

describe("MessageCodec.toJson", () => {
  it("writes int64 as numbers and keeps defaults", () => {
    const json = codec.toJson(
      `${V2}.GetLedgerEndResponse`,
      overTheWire(`${V2}.GetLedgerEndResponse`, { offset: "42" }),
    );
    assert.deepEqual(json, { offset: 42 });
    const empty = codec.toJson(`${V2}.GetLedgerEndResponse`, overTheWire(`${V2}.GetLedgerEndResponse`, {}));
    assert.deepEqual(empty, { offset: 0 });
  });

  it("writes a oneof as {Case: {value}} under the oneof's name", () => {
    const right = overTheWire(`${V2}.admin.Right`, { canActAs: { party: "alice::1220" } });
    assert.deepEqual(codec.toJson(`${V2}.admin.Right`, right), {
      kind: { CanActAs: { value: { party: "alice::1220" } } },
    });
    const admin = overTheWire(`${V2}.admin.Right`, { participantAdmin: {} });
    assert.deepEqual(codec.toJson(`${V2}.admin.Right`, admin), { kind: { ParticipantAdmin: { value: {} } } });
    assert.deepEqual(codec.toJson(`${V2}.admin.Right`, overTheWire(`${V2}.admin.Right`, {})), {
      kind: { Empty: {} },
    });
  });

  it("writes nested messages, maps, enums and absent messages", () => {
    const details = overTheWire(`${V2}.admin.PartyDetails`, {
      party: "alice::1220",
      isLocal: true,
      localMetadata: { resourceVersion: "3", annotations: { team: "blue" } },
    });
    assert.deepEqual(codec.toJson(`${V2}.admin.PartyDetails`, details), {
      party: "alice::1220",
      isLocal: true,
      localMetadata: { resourceVersion: "3", annotations: { team: "blue" } },
      identityProviderId: "",
    });
    const synchronizer = overTheWire(`${V2}.GetConnectedSynchronizersResponse.ConnectedSynchronizer`, {
      synchronizerAlias: "local",
      synchronizerId: "local::1220",
      permission: 1,
    });
    assert.deepEqual(
      codec.toJson(`${V2}.GetConnectedSynchronizersResponse.ConnectedSynchronizer`, synchronizer),
      {
        synchronizerAlias: "local",
        synchronizerId: "local::1220",
        permission: "PARTICIPANT_PERMISSION_SUBMISSION",
      },
    );
  });

  it("writes Timestamps as ISO text", () => {
    const checkpoint = overTheWire(`${V2}.OffsetCheckpoint`, {
      offset: "7",
      synchronizerTimes: [
        { synchronizerId: "s::1", recordTime: { seconds: "1700000000", nanos: 123_456_000 } },
      ],
    });
    assert.deepEqual(codec.toJson(`${V2}.OffsetCheckpoint`, checkpoint), {
      offset: 7,
      synchronizerTimes: [{ synchronizerId: "s::1", recordTime: "2023-11-14T22:13:20.123456Z" }],
    });
  });
});

describe("MessageCodec.fromJson", () => {
  it("reads a oneof case and int64 given as number or text", () => {
    const request = codec.fromJson(`${V2}.admin.Right`, {
      kind: { CanReadAs: { value: { party: "bob::1" } } },
    });
    assert.deepEqual(request, { canReadAs: { party: "bob::1" } });
    assert.deepEqual(codec.fromJson(`${V2}.GetLedgerEndResponse`, { offset: 5 }), { offset: "5" });
    assert.deepEqual(codec.fromJson(`${V2}.GetLedgerEndResponse`, { offset: "6" }), { offset: "6" });
  });

  it("ignores unknown fields and nulls, as Canton's relaxed decoder", () => {
    assert.deepEqual(
      codec.fromJson(`${V2}.admin.AllocatePartyRequest`, { partyIdHint: "a", nope: 1, userId: null }),
      {
        partyIdHint: "a",
      },
    );
  });

  it("names the path of a misfit", () => {
    assert.throws(
      () =>
        codec.fromJson(`${V2}.admin.UpdatePartyDetailsRequest`, {
          partyDetails: { localMetadata: { annotations: { a: 1 } } },
        }),
      (error: unknown) =>
        error instanceof InvalidJsonError &&
        error.path === "partyDetails.localMetadata.annotations.a" &&
        /expected a string, got number 1/.test(error.message),
    );
    assert.throws(
      () => codec.fromJson(`${V2}.admin.Right`, { kind: { CanDance: { value: {} } } }),
      /kind: unknown case CanDance/,
    );
    assert.throws(
      () => codec.fromJson(`${V2}.GetLedgerEndResponse`, { offset: "1.5" }),
      /offset: expected an integer/,
    );
  });

  it("refuses a malformed identifier as Canton 3.6 does: exactly <package>:<moduleName>:<entityName>", () => {
    const filter = (templateId: unknown) =>
      codec.fromJson(`${V2}.TemplateFilter`, { templateId, includeCreatedEventBlob: false });
    assert.deepEqual((filter("#pkg:Mod.Sub:Entity") as { templateId: unknown }).templateId, {
      packageId: "#pkg",
      moduleName: "Mod.Sub",
      entityName: "Entity",
    });
    for (const malformed of ["Iou", "pkg:Iou", "a:b:c:d", ":Mod:Entity", "pkg:Mod:", "pkg::Entity:x"]) {
      assert.throws(
        () => filter(malformed),
        (error: unknown) =>
          error instanceof InvalidJsonError &&
          error.path === "templateId" &&
          error.message.includes(
            `Invalid identifier format (${malformed}) not matching the expected format (<package>:<moduleName>:<entityName>)`,
          ),
        malformed,
      );
    }
    assert.throws(() => filter(7), /templateId: expected an identifier/);
  });

  it("takes integers within their protobuf type's range and refuses the rest instead of wrapping them", () => {
    const end = (offset: unknown) => codec.fromJson(`${V2}.GetLedgerEndResponse`, { offset });
    assert.deepEqual(end("9223372036854775807"), { offset: "9223372036854775807" });
    assert.deepEqual(end("-9223372036854775808"), { offset: "-9223372036854775808" });
    assert.throws(
      () => end("9223372036854775808"),
      /offset: expected an integer from -9223372036854775808 to/,
    );
    assert.throws(() => end(2 ** 64), /offset: expected an integer from/);
    const page = (maxPageSize: unknown) => codec.fromJson(`${V2}.GetUpdatesPageRequest`, { maxPageSize });
    assert.deepEqual(page(2147483647), { maxPageSize: 2147483647 });
    assert.throws(() => page(2147483648), /maxPageSize: expected an integer from -2147483648 to 2147483647/);
    assert.throws(() => page(3e9), /got number 3000000000/);
    const vetted = (pageSize: unknown) => codec.fromJson(`${V2}.ListVettedPackagesRequest`, { pageSize });
    assert.deepEqual(vetted(4294967295), { pageSize: 4294967295 });
    assert.throws(() => vetted(-1), /pageSize: expected an integer from 0 to 4294967295/);
  });

  it("round-trips a request through the real protobuf encoding", () => {
    const json = {
      partyDetails: { party: "alice::1", localMetadata: { resourceVersion: "1", annotations: { k: "v" } } },
      updateMask: { paths: ["local_metadata.annotations"] },
    };
    const request = codec.fromJson(`${V2}.admin.UpdatePartyDetailsRequest`, json) as object;
    const decoded = overTheWire(`${V2}.admin.UpdatePartyDetailsRequest`, request);
    assert.deepEqual(codec.toJson(`${V2}.admin.UpdatePartyDetailsRequest`, decoded), {
      partyDetails: { ...json.partyDetails, isLocal: false, identityProviderId: "" },
      updateMask: { paths: ["local_metadata.annotations"] },
    });
  });
});

describe("timestamps", () => {
  it("print like Java's Instant and parse zoned ISO text", () => {
    assert.equal(timestampToIso({ seconds: "0", nanos: 0 }), "1970-01-01T00:00:00Z");
    assert.equal(timestampToIso({ seconds: "1", nanos: 500_000_000 }), "1970-01-01T00:00:01.500Z");
    assert.equal(timestampToIso({ seconds: "1", nanos: 1_000 }), "1970-01-01T00:00:01.000001Z");
    assert.deepEqual(isoToTimestamp("1970-01-01T01:00:01.25+01:00"), { seconds: "1", nanos: 250_000_000 });
    assert.equal(isoToTimestamp("1970-01-01T00:00:00"), undefined);
  });
});
