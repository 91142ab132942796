import type {
  GetPackageRequest__Output,
  GetPackageResponse,
  GetPackageStatusRequest__Output,
  GetPackageStatusResponse,
  ListPackagesResponse,
  ListVettedPackagesRequest__Output,
  ListVettedPackagesResponse,
} from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { packageIdError } from "../identifiers.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";
import { packageErrors } from "../packages/package-errors.js";
import { vettedPackagesMessage } from "../packages/package-responses.js";
import type { PackageStore, StoredPackage } from "../packages/package-store.js";
import { SANDBOX_LIMITS } from "./version-service.js";

/**
 * PackageService: the packages the participant knows, their archives and its vetting state.
 * Any valid token may read them (Canton's package service is public).
 */
export function packageService(ledger: SandboxStore, packages: PackageStore): ServiceImplementation {
  const validPackageId = (id: string) => {
    const error = packageIdError(id);
    if (error !== undefined) throw errors.invalidArgument(`Invalid package id: ${error}`);
    return id;
  };
  return {
    serviceName: "com.daml.ledger.api.v2.PackageService",
    unary: {
      ListPackages: (): ListPackagesResponse => ({ packageIds: packages.list().map((p) => p.packageId) }),
      GetPackage: (request: GetPackageRequest__Output): GetPackageResponse => {
        const stored = packages.get(validPackageId(request.packageId));
        if (stored === undefined) throw packageErrors.packageNotFound(request.packageId);
        // As Canton: the Archive's payload and hash, so sha256(archivePayload) == hash == id.
        return {
          hashFunction: "HASH_FUNCTION_SHA256",
          archivePayload: Buffer.from(stored.payload),
          hash: stored.packageId,
        };
      },
      GetPackageStatus: (request: GetPackageStatusRequest__Output): GetPackageStatusResponse => ({
        packageStatus:
          packages.get(validPackageId(request.packageId)) === undefined
            ? "PACKAGE_STATUS_UNSPECIFIED"
            : "PACKAGE_STATUS_REGISTERED",
      }),
      ListVettedPackages: (request: ListVettedPackagesRequest__Output) =>
        listVetted(ledger, packages, request),
    },
  };
}

/**
 * One VettedPackages entry per (participant, synchronizer) — here one per synchronizer — paged
 * by synchronizer id. Entries the metadata filter leaves empty are left out.
 */
function listVetted(
  ledger: SandboxStore,
  packages: PackageStore,
  request: ListVettedPackagesRequest__Output,
): ListVettedPackagesResponse {
  if (request.pageSize < 0) throw errors.invalidArgument("Page size must be non-negative");
  const pageSize =
    request.pageSize === 0
      ? SANDBOX_LIMITS.maxVettedPackagesPageSize
      : Math.min(request.pageSize, SANDBOX_LIMITS.maxVettedPackagesPageSize);
  const after = request.pageToken === "" ? undefined : decodePageToken(request.pageToken);
  const ids = request.packageMetadataFilter?.packageIds ?? [];
  const prefixes = request.packageMetadataFilter?.packageNamePrefixes ?? [];
  const filtered = ids.length > 0 || prefixes.length > 0;
  const include = (p: StoredPackage) =>
    !filtered || ids.includes(p.packageId) || prefixes.some((prefix) => p.name.startsWith(prefix));
  const participantIds = request.topologyStateFilter?.participantIds ?? [];
  const synchronizerIds = request.topologyStateFilter?.synchronizerIds ?? [];
  const participantId = ledger.participant.participantId;
  if (participantIds.length > 0 && !participantIds.includes(participantId))
    return { vettedPackages: [], nextPageToken: "" };

  const entries = [...packages.synchronizerIds]
    .sort()
    .filter((id) => synchronizerIds.length === 0 || synchronizerIds.includes(id))
    .filter((id) => after === undefined || id > after)
    .map((id) =>
      vettedPackagesMessage(
        packages.vettingState(id),
        (pid) => packages.get(pid),
        participantId,
        id,
        include,
      ),
    )
    .filter((entry) => !filtered || entry.packages.length > 0)
    .slice(0, pageSize);
  const last = entries[entries.length - 1];
  return {
    vettedPackages: entries,
    nextPageToken: last === undefined ? "" : Buffer.from(last.synchronizerId, "utf8").toString("base64url"),
  };
}

function decodePageToken(token: string): string {
  const decoded = Buffer.from(token, "base64url").toString("utf8");
  if (decoded === "" || Buffer.from(decoded, "utf8").toString("base64url") !== token) {
    throw errors.invalidArgument("Invalid page token");
  }
  return decoded;
}
