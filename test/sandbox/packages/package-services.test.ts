import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { decodeDalf, t, writeDar } from "../../../src/lf/index.js";
import type {
  AllocatePartyResponse__Output,
  GetPackageResponse__Output,
  GetPackageStatusResponse__Output,
  GetPreferredPackagesResponse__Output,
  GetPreferredPackageVersionResponse__Output,
  ListKnownPackagesResponse__Output,
  ListPackagesResponse__Output,
  ListVettedPackagesResponse__Output,
  UpdateVettedPackagesResponse__Output,
} from "../../../src/proto/ledger-api-types.js";
import { SAMPLE_PACKAGE_ID, sampleDalf } from "../../../src/sandbox/sample-package/index.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/sandbox.js";
import { rejection, serviceClient } from "../sandbox-client.js";
import { buildDar, shapesDefinition } from "./test-packages.js";

const PACKAGES = "com.daml.ledger.api.v2.PackageService";
const MANAGEMENT = "com.daml.ledger.api.v2.admin.PackageManagementService";
const INTERACTIVE = "com.daml.ledger.api.v2.interactive.InteractiveSubmissionService";
const PARTIES = "com.daml.ledger.api.v2.admin.PartyManagementService";

const reason = (error: { status: { errorInfos: { reason: string }[] } }) =>
  error.status.errorInfos[0]?.reason;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("sandbox package services", () => {
  let sandbox: RunningSandbox;
  let packages: ReturnType<typeof serviceClient>;
  let management: ReturnType<typeof serviceClient>;
  let interactive: ReturnType<typeof serviceClient>;
  let alice: string;
  const v1 = buildDar(shapesDefinition("1.0.0"));
  const v11 = buildDar(shapesDefinition("1.1.0", [{ name: "color", type: t.optional(t.text) }]));

  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    packages = serviceClient(sandbox.port, PACKAGES);
    management = serviceClient(sandbox.port, MANAGEMENT);
    interactive = serviceClient(sandbox.port, INTERACTIVE);
    const parties = serviceClient(sandbox.port, PARTIES);
    const allocated = await parties.AllocateParty!<AllocatePartyResponse__Output>({
      partyIdHint: "alice",
    });
    alice = allocated.partyDetails?.party ?? "";
    parties.close();
  });
  after(async () => {
    for (const c of [packages, management, interactive]) c.close();
    await sandbox.stop();
  });

  const preferred = async (name: string, parties = [alice]) =>
    await interactive.GetPreferredPackages!<GetPreferredPackagesResponse__Output>({
      packageVettingRequirements: [{ parties, packageName: name }],
    });

  it("lists the preloaded sample package and serves its archive payload, whose sha-256 is the id", async () => {
    const list = await packages.ListPackages!<ListPackagesResponse__Output>({});
    deepStrictEqual(list.packageIds, [SAMPLE_PACKAGE_ID]);
    const got = await packages.GetPackage!<GetPackageResponse__Output>({ packageId: SAMPLE_PACKAGE_ID });
    strictEqual(got.hash, SAMPLE_PACKAGE_ID);
    strictEqual(got.hashFunction, "HASH_FUNCTION_SHA256");
    strictEqual(sha256(got.archivePayload), SAMPLE_PACKAGE_ID);
    ok(Buffer.from(sampleDalf).includes(got.archivePayload), "the payload is the .dalf's Archive.payload");
  });

  it("answers PACKAGE_NOT_FOUND for an unknown id and INVALID_ARGUMENT for a malformed one", async () => {
    const missing = await rejection(packages.GetPackage!({ packageId: "ab".repeat(32) }));
    strictEqual(missing.code, grpc.status.NOT_FOUND);
    strictEqual(reason(missing), "PACKAGE_NOT_FOUND");
    const bad = await rejection(packages.GetPackage!({ packageId: "not/valid" }));
    strictEqual(bad.code, grpc.status.INVALID_ARGUMENT);
    match(bad.details, /Invalid package id/);
  });

  it("reports REGISTERED for a known package and UNSPECIFIED otherwise", async () => {
    strictEqual(
      (
        await packages.GetPackageStatus!<GetPackageStatusResponse__Output>({
          packageId: SAMPLE_PACKAGE_ID,
        })
      ).packageStatus,
      "PACKAGE_STATUS_REGISTERED",
    );
    strictEqual(
      (await packages.GetPackageStatus!<GetPackageStatusResponse__Output>({ packageId: "cd".repeat(32) }))
        .packageStatus,
      "PACKAGE_STATUS_UNSPECIFIED",
    );
  });

  it("validates a DAR without storing it", async () => {
    await management.ValidateDarFile!({ darFile: Buffer.from(v1.dar) });
    const status = await packages.GetPackageStatus!<GetPackageStatusResponse__Output>({
      packageId: v1.packageId,
    });
    strictEqual(status.packageStatus, "PACKAGE_STATUS_UNSPECIFIED");
  });

  it("uploads a DAR without vetting when asked, then vets it with the next serial", async () => {
    await management.UploadDarFile!({
      darFile: Buffer.from(v1.dar),
      vettingChange: "VETTING_CHANGE_DONT_VET_ANY_PACKAGES",
    });
    const known = await management.ListKnownPackages!<ListKnownPackagesResponse__Output>({});
    ok(known.packageDetails.some((d) => d.packageId === v1.packageId && d.name === "test-shapes"));
    const noPref = await rejection(preferred("test-shapes"));
    strictEqual(noPref.code, grpc.status.FAILED_PRECONDITION);
    strictEqual(reason(noPref), "NO_PREFERRED_PACKAGES_FOUND");

    const updated = await management.UpdateVettedPackages!<UpdateVettedPackagesResponse__Output>({
      changes: [{ vet: { packages: [{ packageName: "test-shapes", packageVersion: "1.0.0" }] } }],
    });
    strictEqual(
      updated.newVettedPackages?.topologySerial,
      (updated.pastVettedPackages?.topologySerial ?? 0) + 1,
    );
    ok(updated.newVettedPackages?.packages.some((p) => p.packageId === v1.packageId));
    strictEqual((await preferred("test-shapes")).packageReferences[0]?.packageId, v1.packageId);
  });

  it("prefers the highest vetted version after a compatible upgrade is uploaded and vetted", async () => {
    await management.UploadDarFile!({ darFile: Buffer.from(v11.dar) });
    const answer = await preferred("test-shapes");
    deepStrictEqual(answer.packageReferences, [
      { packageId: v11.packageId, packageName: "test-shapes", packageVersion: "1.1.0" },
    ]);
    strictEqual(answer.synchronizerId, sandbox.store.synchronizers[0]!.id);
  });

  it("rejects vetting another package with a vetted name and version (KNOWN_PACKAGE_VERSION)", async () => {
    const clash = buildDar(shapesDefinition("1.0.0", [{ name: "extra", type: t.optional(t.int64) }]));
    const error = await rejection(management.UploadDarFile!({ darFile: Buffer.from(clash.dar) }));
    strictEqual(error.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(reason(error), "KNOWN_PACKAGE_VERSION");
    match(error.details, /same name and version/);
    // Nothing of the rejected upload was stored.
    const status = await packages.GetPackageStatus!<GetPackageStatusResponse__Output>({
      packageId: clash.packageId,
    });
    strictEqual(status.packageStatus, "PACKAGE_STATUS_UNSPECIFIED");
  });

  it("rejects an upgrade that drops a field (NOT_VALID_UPGRADE_PACKAGE), in validation too", async () => {
    const broken = buildDar(shapesDefinition("2.0.0", [{ name: "color", type: t.text }]));
    const error = await rejection(management.ValidateDarFile!({ darFile: Buffer.from(broken.dar) }));
    strictEqual(reason(error), "NOT_VALID_UPGRADE_PACKAGE");
    match(error.details, /color/);
  });

  it("rejects a corrupt DAR (INVALID_DAR) and a DAR with a broken archive (DAR_PARSE_ERROR)", async () => {
    const corrupt = await rejection(management.UploadDarFile!({ darFile: Buffer.from("not a zip") }));
    strictEqual(corrupt.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(reason(corrupt), "INVALID_DAR");
    const dalf = Buffer.from(v1.dalf);
    // The archive's hash is its last field: changing a byte of it breaks the id check.
    dalf.writeUInt8(dalf.readUInt8(dalf.length - 1) ^ 0x01, dalf.length - 1);
    const tampered = writeDar({ name: "x", version: "1.0.0", packageId: v1.packageId, dalf });
    const parse = await rejection(management.UploadDarFile!({ darFile: Buffer.from(tampered) }));
    strictEqual(parse.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(reason(parse), "DAR_PARSE_ERROR");
  });

  it("unvets by package id and lists vetted packages with filters", async () => {
    const update = await management.UpdateVettedPackages!<UpdateVettedPackagesResponse__Output>({
      changes: [{ unvet: { packages: [{ packageId: v11.packageId }] } }],
    });
    ok(update.newVettedPackages?.packages.every((p) => p.packageId !== v11.packageId));
    strictEqual((await preferred("test-shapes")).packageReferences[0]?.packageVersion, "1.0.0");

    const list = await packages.ListVettedPackages!<ListVettedPackagesResponse__Output>({
      packageMetadataFilter: { packageNamePrefixes: ["test-"] },
    });
    strictEqual(list.vettedPackages.length, 1);
    deepStrictEqual(
      list.vettedPackages[0]!.packages.map((p) => p.packageId),
      [v1.packageId],
    );
    strictEqual(list.vettedPackages[0]!.participantId, sandbox.store.participant.participantId);
  });

  it("rejects a stale expected topology serial and an unknown vetting reference", async () => {
    const stale = await rejection(
      management.UpdateVettedPackages!({
        changes: [{ vet: { packages: [{ packageId: v11.packageId }] } }],
        expectedTopologySerial: { prior: 1 },
      }),
    );
    strictEqual(reason(stale), "TOPOLOGY_SERIAL_MISMATCH");
    const unknown = await rejection(
      management.UpdateVettedPackages!({ changes: [{ vet: { packages: [{ packageName: "nope" }] } }] }),
    );
    strictEqual(reason(unknown), "UNRESOLVED_VETTING_REFERENCE");
  });

  it("answers the deprecated preferred version with an empty preference when none exists", async () => {
    const none = await interactive.GetPreferredPackageVersion!<GetPreferredPackageVersionResponse__Output>({
      parties: [alice],
      packageName: "nope",
    });
    strictEqual(none.packagePreference, null);
    const some = await interactive.GetPreferredPackageVersion!<GetPreferredPackageVersionResponse__Output>({
      parties: [alice],
      packageName: "gateway-samples",
    });
    strictEqual(some.packagePreference?.packageReference?.packageId, SAMPLE_PACKAGE_ID);
  });

  it("decodes what GetPackage serves as the package that was uploaded", async () => {
    const got = await packages.GetPackage!<GetPackageResponse__Output>({ packageId: v1.packageId });
    strictEqual(sha256(got.archivePayload), v1.packageId);
    strictEqual(decodeDalf(v1.dalf).packageId, v1.packageId);
  });
});
