import type {
  GetPreferredPackagesRequest__Output,
  GetPreferredPackagesResponse,
  GetPreferredPackageVersionRequest__Output,
  GetPreferredPackageVersionResponse,
  PackageVettingRequirement__Output,
} from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";
import { packageErrors } from "../packages/package-errors.js";
import { packageReference } from "../packages/package-responses.js";
import type { PackageStore, StoredPackage } from "../packages/package-store.js";
import { dateOf } from "../protocol-values.js";

/**
 * InteractiveSubmissionService, package preference only: for each package name, the highest
 * version vetted by every participant hosting the given parties (here the one participant, so
 * the parties must be hosted by it). Any valid token may ask. Prepare and execute are the
 * methods `submission` brings (interactive/interactive-submission.ts).
 */
export function interactiveSubmissionService(
  ledger: SandboxStore,
  packages: PackageStore,
  submission: ServiceImplementation["unary"] = {},
): ServiceImplementation {
  /** The preferences on one synchronizer, or the reason there is none. */
  const preferencesOn = (
    synchronizerId: string,
    requirements: readonly PackageVettingRequirement__Output[],
    at: Date,
  ): StoredPackage[] | string => {
    const found: StoredPackage[] = [];
    for (const { parties, packageName } of requirements) {
      const unhosted = parties.find((p) => ledger.party(p)?.permissions.get(synchronizerId) === undefined);
      if (unhosted !== undefined) return `party ${unhosted} is not hosted on synchronizer ${synchronizerId}`;
      const preferred = packages.preferred(packageName, synchronizerId, at);
      if (preferred === undefined) {
        return `no package with name ${packageName} is vetted on synchronizer ${synchronizerId} by the participants hosting ${parties.join(", ")}`;
      }
      found.push(preferred);
    }
    return found;
  };
  /** The first synchronizer (the requested one, or any connected) that satisfies everything. */
  const resolve = (
    synchronizerId: string,
    requirements: readonly PackageVettingRequirement__Output[],
    at: Date,
  ): { synchronizerId: string; packages: StoredPackage[] } | { reason: string; packages?: undefined } => {
    const candidates = synchronizerId === "" ? packages.synchronizerIds : [synchronizerId];
    if (synchronizerId !== "" && !packages.synchronizerIds.includes(synchronizerId)) {
      return { reason: `the participant is not connected to synchronizer ${synchronizerId}` };
    }
    let reason = "no synchronizer is connected";
    for (const candidate of candidates) {
      const result = preferencesOn(candidate, requirements, at);
      if (typeof result !== "string") return { synchronizerId: candidate, packages: result };
      reason = result;
    }
    return { reason };
  };
  const validate = (requirements: readonly PackageVettingRequirement__Output[], field: string) => {
    for (const [i, r] of requirements.entries()) {
      if (r.packageName === "") throw errors.missingField(`${field}[${i}].package_name`);
      if (r.parties.length === 0) throw errors.missingField(`${field}[${i}].parties`);
    }
  };

  return {
    serviceName: "com.daml.ledger.api.v2.interactive.InteractiveSubmissionService",
    unary: {
      ...submission,
      GetPreferredPackages: async (
        request: GetPreferredPackagesRequest__Output,
        context,
      ): Promise<GetPreferredPackagesResponse> => {
        await context.authorize({ kind: "authenticated" });
        const requirements = request.packageVettingRequirements;
        if (requirements.length === 0) throw errors.missingField("package_vetting_requirements");
        validate(requirements, "package_vetting_requirements");
        const at = dateOf(request.vettingValidAt) ?? new Date();
        const result = resolve(request.synchronizerId, requirements, at);
        if (result.packages === undefined) throw packageErrors.noPreferredPackages(result.reason);
        return {
          packageReferences: result.packages.map(packageReference),
          synchronizerId: result.synchronizerId,
        };
      },
      // Deprecated form: one package name, and "none" is an empty answer rather than an error.
      GetPreferredPackageVersion: async (
        request: GetPreferredPackageVersionRequest__Output,
        context,
      ): Promise<GetPreferredPackageVersionResponse> => {
        await context.authorize({ kind: "authenticated" });
        const requirement = { parties: request.parties, packageName: request.packageName };
        if (request.packageName === "") throw errors.missingField("package_name");
        const at = dateOf(request.vettingValidAt) ?? new Date();
        const result = resolve(request.synchronizerId, [requirement], at);
        const preferred = "synchronizerId" in result ? result.packages[0] : undefined;
        return {
          packagePreference:
            preferred === undefined || !("synchronizerId" in result)
              ? null
              : { packageReference: packageReference(preferred), synchronizerId: result.synchronizerId },
        };
      },
    },
  };
}
