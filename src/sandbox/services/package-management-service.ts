import type {
  ListKnownPackagesResponse,
  UpdateVettedPackagesRequest__Output,
  UpdateVettedPackagesResponse,
  UploadDarFileRequest__Output,
  UploadDarFileResponse,
  ValidateDarFileRequest__Output,
  ValidateDarFileResponse,
  VettedPackagesRef__Output,
} from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";
import { readUploadedDar, type UploadedDar } from "../packages/dar-reader.js";
import { packageErrors } from "../packages/package-errors.js";
import { vettedPackagesMessage } from "../packages/package-responses.js";
import type { PackageStore, VettingBounds, VettingChange } from "../packages/package-store.js";
import { dateOf, timestamp } from "../protocol-values.js";

/** PackageManagementService: DAR upload and validation, known packages, vetting changes (admin only). */
export function packageManagementService(
  ledger: SandboxStore,
  packages: PackageStore,
): ServiceImplementation {
  const target = (synchronizerId: string) => {
    const id = packages.targetSynchronizer(synchronizerId);
    if (id === undefined) throw packageErrors.notConnectedToSynchronizer(synchronizerId);
    return id;
  };
  /** Reads and checks a DAR; with `vetOn`, also the vetting it would cause (without applying it). */
  const prepare = (darFile: Buffer, vetOn: string | undefined): UploadedDar => {
    const dar = readUploadedDar(darFile);
    packages.checkDependencies(dar);
    if (vetOn !== undefined)
      packages.applyVetting(vetOn, vetAll(packages, vetOn, dar), { dryRun: true }, dar.packages);
    return dar;
  };
  const vettedMessage = (synchronizerId: string, state = packages.vettingState(synchronizerId)) =>
    vettedPackagesMessage(state, (id) => packages.get(id), ledger.participant.participantId, synchronizerId);

  return {
    serviceName: "com.daml.ledger.api.v2.admin.PackageManagementService",
    unary: {
      ListKnownPackages: async (_request: unknown, context): Promise<ListKnownPackagesResponse> => {
        await context.authorize({ kind: "admin" });
        return {
          packageDetails: packages.list().map((p) => ({
            packageId: p.packageId,
            packageSize: String(p.archiveSize),
            knownSince: timestamp(p.knownSince),
            name: p.name,
            version: p.version,
          })),
        };
      },
      UploadDarFile: async (
        request: UploadDarFileRequest__Output,
        context,
      ): Promise<UploadDarFileResponse> => {
        await context.authorize({ kind: "admin" });
        const synchronizerId = target(request.synchronizerId);
        // Canton vets unless told not to (UNSPECIFIED means vet all).
        const vet = request.vettingChange !== "VETTING_CHANGE_DONT_VET_ANY_PACKAGES";
        const dar = prepare(request.darFile, vet ? synchronizerId : undefined);
        packages.add(dar.packages);
        if (vet) packages.applyVetting(synchronizerId, vetAll(packages, synchronizerId, dar));
        return {};
      },
      ValidateDarFile: async (
        request: ValidateDarFileRequest__Output,
        context,
      ): Promise<ValidateDarFileResponse> => {
        await context.authorize({ kind: "admin" });
        prepare(request.darFile, target(request.synchronizerId));
        return {};
      },
      UpdateVettedPackages: async (
        request: UpdateVettedPackagesRequest__Output,
        context,
      ): Promise<UpdateVettedPackagesResponse> => {
        await context.authorize({ kind: "admin" });
        const synchronizerId = target(request.synchronizerId);
        const serial = request.expectedTopologySerial;
        const expectedSerial =
          serial?.serial === "prior" ? serial.prior : serial?.serial === "noPrior" ? 0 : undefined;
        const flags = new Set(request.updateVettedPackagesForceFlags);
        const { past, next } = packages.applyVetting(synchronizerId, vettingChange(packages, request), {
          ...(expectedSerial === undefined ? {} : { expectedSerial }),
          dryRun: request.dryRun,
          allowIncompatibleUpgrades: flags.has(
            "UPDATE_VETTED_PACKAGES_FORCE_FLAG_ALLOW_VET_INCOMPATIBLE_UPGRADES",
          ),
          allowUnvettedDependencies: flags.has(
            "UPDATE_VETTED_PACKAGES_FORCE_FLAG_ALLOW_UNVETTED_DEPENDENCIES",
          ),
        });
        return {
          pastVettedPackages: vettedMessage(synchronizerId, past),
          newVettedPackages: vettedMessage(synchronizerId, next),
        };
      },
    },
  };
}

/** Vets every package of the DAR; already vetted ones keep their validity window. */
function vetAll(packages: PackageStore, synchronizerId: string, dar: UploadedDar): VettingChange {
  const current = packages.vettingState(synchronizerId).packages;
  return new Map(dar.packages.map((p) => [p.packageId, current.get(p.packageId) ?? {}]));
}

/** The request's changes in order (a later change of the same package wins). */
function vettingChange(packages: PackageStore, request: UpdateVettedPackagesRequest__Output): VettingChange {
  const change = new Map<string, VettingBounds | null>();
  for (const [i, c] of request.changes.entries()) {
    if (c.operation === "vet" && c.vet) {
      const from = dateOf(c.vet.newValidFromInclusive);
      const until = dateOf(c.vet.newValidUntilExclusive);
      const bounds: VettingBounds = {
        ...(from ? { validFrom: from } : {}),
        ...(until ? { validUntil: until } : {}),
      };
      for (const ref of c.vet.packages) change.set(resolveRef(packages, ref), bounds);
    } else if (c.operation === "unvet" && c.unvet) {
      for (const ref of c.unvet.packages) change.set(resolveRef(packages, ref), null);
    } else {
      throw errors.missingField(`changes[${i}].operation`);
    }
  }
  return change;
}

/** A reference names one stored package by id, or by name (and version); Canton's errors otherwise. */
function resolveRef(packages: PackageStore, ref: VettedPackagesRef__Output): string {
  const { packageId, packageName, packageVersion } = ref;
  if (packageId === "" && packageName === "") {
    throw errors.invalidArgument("A vetted package reference needs a package id or a package name");
  }
  const shown = `VettedPackagesRef(id=${packageId || "-"}, name=${packageName || "-"}, version=${packageVersion || "-"})`;
  const matching = packages
    .list()
    .filter(
      (p) =>
        (packageId === "" || p.packageId === packageId) &&
        (packageName === "" || p.name === packageName) &&
        (packageVersion === "" || p.version === packageVersion),
    );
  if (matching.length === 0)
    throw packageErrors.unresolvedVettingReference(shown, "no package in the store matches it");
  if (matching.length > 1)
    throw packageErrors.ambiguousVettingReference(
      shown,
      matching.map((p) => p.packageId),
    );
  return matching[0]!.packageId;
}
