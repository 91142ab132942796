/**
 * Request and response shapes of the package services as @grpc/proto-loader gives them with
 * PROTO_OPTIONS (camelCase, defaults filled, absent messages null, enums as names, bytes as
 * Buffer). Only the fields the handlers use are declared.
 */
import type { StoredPackage, VettingBounds, VettingState } from "./package-store.js";

export interface Timestamp {
  seconds: string | number;
  nanos: number;
}

export interface PackageIdRequest {
  packageId: string;
}

export interface ListVettedPackagesRequest {
  packageMetadataFilter: { packageIds: string[]; packageNamePrefixes: string[] } | null;
  topologyStateFilter: { participantIds: string[]; synchronizerIds: string[] } | null;
  pageToken: string;
  pageSize: number;
}

export interface UploadDarFileRequest {
  darFile: Buffer;
  submissionId: string;
  vettingChange:
    | "VETTING_CHANGE_UNSPECIFIED"
    | "VETTING_CHANGE_VET_ALL_PACKAGES"
    | "VETTING_CHANGE_DONT_VET_ANY_PACKAGES";
  synchronizerId: string;
}

export interface ValidateDarFileRequest {
  darFile: Buffer;
  submissionId: string;
  synchronizerId: string;
}

export interface VettedPackagesRef {
  packageId: string;
  packageName: string;
  packageVersion: string;
}

export interface VettedPackagesChange {
  operation?: "vet" | "unvet";
  vet: {
    packages: VettedPackagesRef[];
    newValidFromInclusive: Timestamp | null;
    newValidUntilExclusive: Timestamp | null;
  } | null;
  unvet: { packages: VettedPackagesRef[] } | null;
}

export interface UpdateVettedPackagesRequest {
  changes: VettedPackagesChange[];
  dryRun: boolean;
  synchronizerId: string;
  expectedTopologySerial: { serial?: "prior" | "noPrior"; prior: number } | null;
  updateVettedPackagesForceFlags: string[];
}

export interface PackageVettingRequirement {
  parties: string[];
  packageName: string;
}

export interface GetPreferredPackagesRequest {
  packageVettingRequirements: PackageVettingRequirement[];
  synchronizerId: string;
  vettingValidAt: Timestamp | null;
}

export interface GetPreferredPackageVersionRequest {
  parties: string[];
  packageName: string;
  synchronizerId: string;
  vettingValidAt: Timestamp | null;
}

export function toTimestamp(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

export function fromTimestamp(ts: Timestamp | null): Date | undefined {
  return ts === null ? undefined : new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1_000_000));
}

export function packageReference(p: StoredPackage) {
  return { packageId: p.packageId, packageName: p.name, packageVersion: p.version };
}

/** A VettedPackages topology entry, its packages limited to `include`. */
export function vettedPackagesMessage(
  state: VettingState,
  lookup: (id: string) => StoredPackage | undefined,
  participantId: string,
  synchronizerId: string,
  include: (p: StoredPackage) => boolean = () => true,
) {
  const packages = [...state.packages].flatMap(([id, bounds]) => {
    const p = lookup(id);
    return p !== undefined && include(p) ? [vettedPackage(p, bounds)] : [];
  });
  return { packages, participantId, synchronizerId, topologySerial: state.serial };
}

function vettedPackage(p: StoredPackage, bounds: VettingBounds) {
  return {
    packageId: p.packageId,
    validFromInclusive: bounds.validFrom ? toTimestamp(bounds.validFrom) : null,
    validUntilExclusive: bounds.validUntil ? toTimestamp(bounds.validUntil) : null,
    packageName: p.name,
    packageVersion: p.version,
  };
}

const PACKAGE_ID_CHARS = /^[A-Za-z0-9\-_ ]+$/;

/** Ref.PackageId: 1 to 64 of letters, digits, `-`, `_` and space. */
export function packageIdError(id: string): string | undefined {
  if (id.length === 0) return "Daml-LF Package ID is empty";
  if (id.length > 64) return "Daml-LF Package ID is too long (max: 64)";
  return PACKAGE_ID_CHARS.test(id) ? undefined : `non expected character in Daml-LF Package ID "${id}"`;
}
