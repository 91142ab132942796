/**
 * The participant's packages: every archive it knows (uploaded DARs and the preloaded sample
 * package) and, per synchronizer, its vetting state — the topology mapping Canton publishes as
 * `VettedPackages` with a serial that grows by one on every change. Kept apart from the ledger
 * store: uploads and vetting do not take ledger offsets.
 */
import type { ArchivedPackage, UploadedDar } from "./dar-reader.js";
import { packageErrors } from "./package-errors.js";
import { compareVersions } from "./package-version.js";
import { checkVettingSet } from "./upgrade-check.js";

export interface StoredPackage extends ArchivedPackage {
  readonly knownSince: Date;
}

/** A vetted package's validity window; absent bounds are open. */
export interface VettingBounds {
  readonly validFrom?: Date;
  readonly validUntil?: Date;
}

export interface VettingState {
  /** 0 before the first vetting transaction on the synchronizer. */
  readonly serial: number;
  readonly packages: ReadonlyMap<string, VettingBounds>;
}

/** A change of the vetting state: a bounds entry vets (or re-vets), null unvets. */
export type VettingChange = ReadonlyMap<string, VettingBounds | null>;

export interface VettingOptions {
  /** Only the serial after which the change applies; a different current serial rejects it. */
  readonly expectedSerial?: number;
  readonly allowIncompatibleUpgrades?: boolean;
  readonly allowUnvettedDependencies?: boolean;
  readonly dryRun?: boolean;
}

const EMPTY_STATE: VettingState = { serial: 0, packages: new Map() };

export class PackageStore {
  private readonly packages = new Map<string, StoredPackage>();
  private readonly vetting = new Map<string, VettingState>();

  constructor(readonly synchronizerIds: readonly string[]) {}

  /**
   * The synchronizer a request targets: the given one if connected, else (none given) the
   * first connected one, as Canton picks the only synchronizer when it can autodetect it.
   */
  targetSynchronizer(requested: string): string | undefined {
    if (requested === "") return this.synchronizerIds[0];
    return this.synchronizerIds.includes(requested) ? requested : undefined;
  }

  /** Ids in upload order (Canton lists its package store without a defined order). */
  list(): StoredPackage[] {
    return [...this.packages.values()];
  }

  get(packageId: string): StoredPackage | undefined {
    return this.packages.get(packageId);
  }

  /**
   * Every package a DAR's packages import must come with the DAR or be known already; the
   * participant could not interpret them otherwise (Canton: DAR_DEPENDENCIES_NOT_VALID).
   */
  checkDependencies(dar: UploadedDar): void {
    const inDar = new Set(dar.packages.map((p) => p.packageId));
    const missing = new Set<string>();
    for (const p of dar.packages) {
      for (const id of p.signature.imports) if (!inDar.has(id) && !this.packages.has(id)) missing.add(id);
    }
    if (missing.size > 0) throw packageErrors.darDependenciesNotValid(dar.mainPackageId, [...missing]);
  }

  /** Stores the packages; ones already known keep their first `knownSince`. */
  add(packages: readonly ArchivedPackage[], now = new Date()): void {
    for (const p of packages)
      if (!this.packages.has(p.packageId)) this.packages.set(p.packageId, { ...p, knownSince: now });
  }

  vettingState(synchronizerId: string): VettingState {
    return this.vetting.get(synchronizerId) ?? EMPTY_STATE;
  }

  /**
   * The vetting state after `change`, checked as Canton's topology manager checks it (serial,
   * dependencies, upgrade compatibility of the resulting set); applied unless a dry run.
   * Packages in `change` must be in the store (or in `incoming`, validated but not yet stored).
   */
  applyVetting(
    synchronizerId: string,
    change: VettingChange,
    options: VettingOptions = {},
    incoming: readonly ArchivedPackage[] = [],
  ): { past: VettingState; next: VettingState } {
    const past = this.vettingState(synchronizerId);
    if (options.expectedSerial !== undefined && options.expectedSerial !== past.serial) {
      throw packageErrors.serialMismatch(options.expectedSerial, past.serial);
    }
    const lookup = (id: string) => this.packages.get(id) ?? incoming.find((p) => p.packageId === id);
    const packages = new Map(past.packages);
    for (const [id, bounds] of change) {
      if (bounds === null) packages.delete(id);
      else packages.set(id, bounds);
    }
    const newlyVetted = new Set(
      [...change].filter(([id, b]) => b !== null && !past.packages.has(id)).map(([id]) => id),
    );
    if (!options.allowUnvettedDependencies) {
      for (const id of packages.keys()) {
        const missing = lookup(id)?.signature.imports.filter((dep) => !packages.has(dep)) ?? [];
        if (missing.length > 0) throw packageErrors.dependenciesNotVetted(id, missing);
      }
    }
    if (!options.allowIncompatibleUpgrades) {
      const vetted = [...packages.keys()].map(lookup).filter((p): p is ArchivedPackage => p !== undefined);
      checkVettingSet(vetted, newlyVetted);
    }
    const changed = [...change].some(([id, b]) =>
      b === null ? past.packages.has(id) : !sameBounds(past.packages.get(id), b),
    );
    const next: VettingState = changed ? { serial: past.serial + 1, packages } : past;
    if (!options.dryRun) this.vetting.set(synchronizerId, next);
    return { past, next };
  }

  /**
   * The preferred package of a name: the highest version vetted on the synchronizer and valid
   * at `at`. With one participant, "vetted by all hosting participants" is this one's vetting.
   */
  preferred(name: string, synchronizerId: string, at: Date): StoredPackage | undefined {
    let best: StoredPackage | undefined;
    for (const [id, bounds] of this.vettingState(synchronizerId).packages) {
      const p = this.packages.get(id);
      if (p === undefined || p.name !== name || !validAt(bounds, at)) continue;
      if (best === undefined || compareVersions(p.version, best.version) > 0) best = p;
    }
    return best;
  }
}

function validAt(bounds: VettingBounds, at: Date): boolean {
  return (
    (bounds.validFrom === undefined || bounds.validFrom <= at) &&
    (bounds.validUntil === undefined || at < bounds.validUntil)
  );
}

function sameBounds(a: VettingBounds | undefined, b: VettingBounds): boolean {
  return (
    a !== undefined &&
    a.validFrom?.getTime() === b.validFrom?.getTime() &&
    a.validUntil?.getTime() === b.validUntil?.getTime()
  );
}
