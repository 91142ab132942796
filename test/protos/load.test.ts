import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { loadSync, type PackageDefinition } from "@grpc/proto-loader";
import type { ApiVersion } from "../../src/proto/api-version.js";
import { RPC_AVAILABILITY, rpcAvailableIn } from "../../src/proto/rpc-availability.js";

const PROTOS = "protos";

// The options the gateway and the sandbox load the protos with.
const LOADER_OPTIONS = {
  includeDirs: [PROTOS],
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

const V2 = "com.daml.ledger.api.v2";

// Every service of the Ledger API v2 with all of its methods, in the union of the known releases
// (3.5.4, 3.5.10, 3.6.0; protos/VERSIONS.md): the methods not every release has are marked in
// src/proto/rpc-availability.ts, checked below.
const EXPECTED_SERVICES: Record<string, string[]> = {
  [`${V2}.CommandService`]: ["SubmitAndWait", "SubmitAndWaitForTransaction", "SubmitAndWaitForReassignment"],
  [`${V2}.CommandSubmissionService`]: ["Submit", "SubmitReassignment"],
  [`${V2}.CommandCompletionService`]: ["CompletionStream", "GetCompletions", "GetCompletionByHash"],
  [`${V2}.UpdateService`]: [
    "GetUpdates",
    "GetUpdateByOffset",
    "GetUpdateById",
    "GetUpdateByHash",
    "GetUpdatesPage",
  ],
  [`${V2}.JoseService`]: ["GetJwks"],
  [`${V2}.StateService`]: [
    "GetActiveContracts",
    "GetActiveContractsPage",
    "GetConnectedSynchronizers",
    "GetLedgerEnd",
    "GetLatestPrunedOffsets",
  ],
  [`${V2}.EventQueryService`]: ["GetEventsByContractId"],
  [`${V2}.ContractService`]: ["GetContract"],
  [`${V2}.PackageService`]: ["ListPackages", "GetPackage", "GetPackageStatus", "ListVettedPackages"],
  [`${V2}.VersionService`]: ["GetLedgerApiVersion"],
  [`${V2}.testing.TimeService`]: ["GetTime", "SetTime"],
  [`${V2}.interactive.InteractiveSubmissionService`]: [
    "PrepareSubmission",
    "ExecuteSubmission",
    "ExecuteSubmissionAndWait",
    "ExecuteSubmissionAndWaitForTransaction",
    "GetPreferredPackageVersion",
    "GetPreferredPackages",
  ],
  [`${V2}.admin.PackageManagementService`]: [
    "ListKnownPackages",
    "UploadDarFile",
    "ValidateDarFile",
    "UpdateVettedPackages",
  ],
  [`${V2}.admin.PartyManagementService`]: [
    "GetParticipantId",
    "GetParties",
    "ListKnownParties",
    "AllocateParty",
    "AllocateExternalParty",
    "UpdatePartyDetails",
    "UpdatePartyIdentityProviderId",
    "GenerateExternalPartyTopology",
  ],
  [`${V2}.admin.PartyManagementAlphaService`]: ["ExportPartyAcs", "AddPartyWithAcs", "GetAddPartyStatus"],
  [`${V2}.admin.UserManagementService`]: [
    "CreateUser",
    "GetUser",
    "UpdateUser",
    "DeleteUser",
    "ListUsers",
    "GrantUserRights",
    "RevokeUserRights",
    "ListUserRights",
    "UpdateUserIdentityProviderId",
  ],
  [`${V2}.admin.IdentityProviderConfigService`]: [
    "CreateIdentityProviderConfig",
    "GetIdentityProviderConfig",
    "UpdateIdentityProviderConfig",
    "ListIdentityProviderConfigs",
    "DeleteIdentityProviderConfig",
  ],
  [`${V2}.admin.ParticipantPruningService`]: ["Prune"],
  [`${V2}.admin.CommandInspectionService`]: ["GetCommandStatus"],
};

// Server-streaming methods; every other method is unary.
const SERVER_STREAMING = new Set([
  `${V2}.CommandCompletionService.CompletionStream`,
  `${V2}.CommandCompletionService.GetCompletions`,
  `${V2}.UpdateService.GetUpdates`,
  `${V2}.StateService.GetActiveContracts`,
  `${V2}.admin.PartyManagementAlphaService.ExportPartyAcs`,
]);

function protoFiles(): string[] {
  return readdirSync(PROTOS, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".proto"))
    .map((f) => f.split("\\").join("/"))
    .sort();
}

type MethodDef = { path: string; requestStream: boolean; responseStream: boolean };

function isService(def: PackageDefinition[string]): boolean {
  return !("format" in def) && !("type" in def);
}

describe("protos/", () => {
  const files = protoFiles();
  const pkg = loadSync(files, LOADER_OPTIONS);

  it("holds the Ledger API v2 and google.rpc files", () => {
    assert.ok(files.length >= 37, `only ${files.length} .proto files under ${PROTOS}/`);
    for (const f of [
      "google/rpc/status.proto",
      "google/rpc/error_details.proto",
      "com/daml/ledger/api/v2/value.proto",
      "com/daml/ledger/api/v2/state_service.proto",
      "com/daml/ledger/api/v2/interactive/transaction/v1/interactive_submission_data.proto",
    ]) {
      assert.ok(files.includes(f), `missing ${f}`);
    }
  });

  it("loads every file with proto-loader, each one also on its own", () => {
    for (const f of files) {
      assert.doesNotThrow(() => loadSync(f, LOADER_OPTIONS), `${f} does not load alone`);
    }
  });

  it("resolves the google/protobuf well-known types from proto-loader's bundle, not from protos/", () => {
    assert.ok(!files.some((f) => f.startsWith("google/protobuf/")), "well-known types must not be vendored");
    for (const t of ["Empty", "Timestamp", "Duration", "Any", "FieldMask"]) {
      assert.ok(pkg[`google.protobuf.${t}`], `google.protobuf.${t} not resolved`);
    }
    const struct = loadSync("google/protobuf/struct.proto", LOADER_OPTIONS);
    assert.ok(struct["google.protobuf.Struct"], "google.protobuf.Struct not resolved");
  });

  it("defines every expected service with exactly its methods and streaming kinds", () => {
    const services = Object.keys(pkg).filter((k) => k.startsWith(V2) && isService(pkg[k]!));
    assert.deepEqual(services.sort(), Object.keys(EXPECTED_SERVICES).sort());
    for (const [name, methods] of Object.entries(EXPECTED_SERVICES)) {
      const service = pkg[name] as unknown as Record<string, MethodDef>;
      assert.deepEqual(Object.keys(service).sort(), [...methods].sort(), `methods of ${name}`);
      for (const m of methods) {
        const def = service[m]!;
        assert.equal(def.path, `/${name}/${m}`);
        assert.equal(def.requestStream, false, `${name}.${m} is not client-streaming`);
        assert.equal(def.responseStream, SERVER_STREAMING.has(`${name}.${m}`), `${name}.${m} streaming kind`);
      }
    }
  });

  it("marks exactly the methods that not every known release has, each with a method of the protos", () => {
    for (const key of Object.keys(RPC_AVAILABILITY)) {
      const [service, rpc] = key.split("/") as [string, string];
      assert.ok(EXPECTED_SERVICES[`${V2}.${service}`]?.includes(rpc), `${key} is not a method of the protos`);
    }
    const methodsOf = (version: ApiVersion) =>
      Object.entries(EXPECTED_SERVICES).flatMap(([name, methods]) =>
        methods
          .filter((m) => rpcAvailableIn(name.slice(V2.length + 1), m, version))
          .map((m) => `${name.slice(V2.length + 1)}/${m}`),
      );
    const v354 = new Set(methodsOf("3.5.4"));
    const v3510 = new Set(methodsOf("3.5.10"));
    const v36 = new Set(methodsOf("3.6.0"));
    assert.deepEqual(
      [...v3510].filter((m) => !v354.has(m)),
      ["CommandCompletionService/GetCompletions"],
    );
    assert.deepEqual([...v36].filter((m) => !v3510.has(m)).sort(), [
      "CommandCompletionService/GetCompletionByHash",
      "JoseService/GetJwks",
      "UpdateService/GetUpdateByHash",
      "admin.PartyManagementAlphaService/AddPartyWithAcs",
      "admin.PartyManagementAlphaService/ExportPartyAcs",
      "admin.PartyManagementAlphaService/GetAddPartyStatus",
    ]);
    assert.deepEqual(
      [...v3510].filter((m) => !v36.has(m)),
      ["interactive.InteractiveSubmissionService/GetPreferredPackageVersion"],
    );
  });

  it("carries the error detail messages the gateway decodes", () => {
    for (const t of [
      "Status",
      "ErrorInfo",
      "RetryInfo",
      "DebugInfo",
      "QuotaFailure",
      "PreconditionFailure",
      "BadRequest",
      "RequestInfo",
      "ResourceInfo",
      "Help",
      "LocalizedMessage",
    ]) {
      const def = pkg[`google.rpc.${t}`];
      assert.ok(
        def && "format" in def && def.format === "Protocol Buffer 3 DescriptorProto",
        `google.rpc.${t}`,
      );
    }
  });
});
