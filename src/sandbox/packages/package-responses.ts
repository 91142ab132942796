import type { PackageReference, VettedPackage } from "../../proto/ledger-api-types.js";
import { timestamp } from "../protocol-values.js";
import type { StoredPackage, VettingBounds, VettingState } from "./package-store.js";

/** The package services' answers built from the package store. */

export function packageReference(p: StoredPackage): PackageReference {
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

function vettedPackage(p: StoredPackage, bounds: VettingBounds): VettedPackage {
  return {
    packageId: p.packageId,
    validFromInclusive: bounds.validFrom ? timestamp(bounds.validFrom) : null,
    validUntilExclusive: bounds.validUntil ? timestamp(bounds.validUntil) : null,
    packageName: p.name,
    packageVersion: p.version,
  };
}
