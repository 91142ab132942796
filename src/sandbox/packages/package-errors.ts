import { ERROR_CATEGORIES } from "../../proto/error-categories.js";
import { CONTEXTUALIZED, errorCode, resource, SandboxError } from "../sandbox-error.js";

/** A package as Canton names it in error causes: `<id> (<name> v<version>)`. */
export interface PackageLabel {
  readonly packageId: string;
  readonly name: string;
  readonly version: string;
}

/**
 * Package codes: RequestValidationErrors.NotFound, PackageServiceErrors, CantonPackageServiceError,
 * TopologyManagerError (vetting), LedgerApiErrors (preferred packages).
 */
const PACKAGE_ERROR_CODES = {
  PACKAGE_NOT_FOUND: errorCode(
    "PACKAGE_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  INVALID_DAR: errorCode("INVALID_DAR", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  DAR_PARSE_ERROR: errorCode("DAR_PARSE_ERROR", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  ZIP_BOMB: errorCode("ZIP_BOMB", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  DAR_DEPENDENCIES_NOT_VALID: errorCode(
    "DAR_DEPENDENCIES_NOT_VALID",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  PACKAGE_SERVICE_NOT_CONNECTED_TO_SYNCHRONIZER: errorCode(
    "PACKAGE_SERVICE_NOT_CONNECTED_TO_SYNCHRONIZER",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  KNOWN_PACKAGE_VERSION: errorCode("KNOWN_PACKAGE_VERSION", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
  DAML_PRIM_NOT_UTILITY_PACKAGE: errorCode(
    "DAML_PRIM_NOT_UTILITY_PACKAGE",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  NOT_VALID_UPGRADE_PACKAGE: errorCode(
    "NOT_VALID_UPGRADE_PACKAGE",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  TOPOLOGY_DEPENDENCIES_NOT_VETTED: errorCode(
    "TOPOLOGY_DEPENDENCIES_NOT_VETTED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  TOPOLOGY_SERIAL_MISMATCH: errorCode(
    "TOPOLOGY_SERIAL_MISMATCH",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  UNRESOLVED_VETTING_REFERENCE: errorCode(
    "UNRESOLVED_VETTING_REFERENCE",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  AMBIGUOUS_VETTING_REFERENCE: errorCode(
    "AMBIGUOUS_VETTING_REFERENCE",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  NO_PREFERRED_PACKAGES_FOUND: errorCode(
    "NO_PREFERRED_PACKAGES_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
} as const;

const describePackage = (p: PackageLabel): string => `${p.packageId} (${p.name} v${p.version})`;

/**
 * The package errors of the sandbox, with Canton 3.5's codes and cause texts (PackageServiceErrors,
 * CantonPackageServiceError, TopologyManagerError's vetting errors, LedgerApiErrors).
 */
export const packageErrors = {
  packageNotFound: (packageId: string) =>
    new SandboxError(PACKAGE_ERROR_CODES.PACKAGE_NOT_FOUND, "Could not find package.", {
      ...resource("PACKAGE", packageId),
      definiteAnswer: false,
    }),

  /** The zip or its manifest cannot be read: Canton's InvalidDar ("Dar file is corrupt"). */
  invalidDar: (reason: string) =>
    new SandboxError(PACKAGE_ERROR_CODES.INVALID_DAR, "Dar file is corrupt", {
      context: { throwable: reason },
      ...CONTEXTUALIZED,
    }),

  /** A DAR that would inflate past the bound (lf/dar.ts), refused before it is inflated. */
  zipBomb: (msg: string) =>
    new SandboxError(PACKAGE_ERROR_CODES.ZIP_BOMB, "Dar zip file seems to be a zip bomb.", {
      context: { msg },
      ...CONTEXTUALIZED,
    }),

  /** An entry is not a valid Daml-LF archive. */
  darParseError: (reason: string) =>
    new SandboxError(PACKAGE_ERROR_CODES.DAR_PARSE_ERROR, "Failed to parse the dar file content.", {
      context: { reason },
      ...CONTEXTUALIZED,
    }),

  darDependenciesNotValid: (mainPackageId: string, missing: readonly string[]) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.DAR_DEPENDENCIES_NOT_VALID,
      "The set of packages in the dar is not self-consistent and is missing dependencies or has extra dependencies",
      {
        context: {
          mainPackageId,
          missingDependencies: `Set(${missing.join(", ")})`,
          extraDependencies: "Set()",
        },
        ...CONTEXTUALIZED,
      },
    ),

  notConnectedToSynchronizer: (synchronizerId: string) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.PACKAGE_SERVICE_NOT_CONNECTED_TO_SYNCHRONIZER,
      `Cannot upload a dar because the participant is not connected to synchronizer '${synchronizerId}'.`,
      CONTEXTUALIZED,
    ),

  knownPackageVersion: (first: PackageLabel, second: PackageLabel) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.KNOWN_PACKAGE_VERSION,
      `Tried to vet two packages with the same name and version: ${describePackage(first)} and ${describePackage(second)}.`,
      CONTEXTUALIZED,
    ),

  damlPrimNotUtilityPackage: (p: PackageLabel) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.DAML_PRIM_NOT_UTILITY_PACKAGE,
      `Tried to vet a package ${describePackage(p)}, but this package is not a utility package. All packages named \`daml-prim\` or \`daml-std-lib\` must be a utility package.`,
      CONTEXTUALIZED,
    ),

  notValidUpgrade: (oldPackage: PackageLabel, newPackage: PackageLabel, reason: string) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.NOT_VALID_UPGRADE_PACKAGE,
      `Upgrade checks indicate that ${describePackage(newPackage)} cannot be an upgrade of ${describePackage(oldPackage)}. Reason: ${reason}`,
      CONTEXTUALIZED,
    ),

  dependenciesNotVetted: (packageId: string, missing: readonly string[]) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.TOPOLOGY_DEPENDENCIES_NOT_VETTED,
      "Package vetting failed due to dependencies not being vetted",
      { context: { package: packageId, dependencies: missing.join(", ") }, ...CONTEXTUALIZED },
    ),

  serialMismatch: (expected: number, actual: number) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.TOPOLOGY_SERIAL_MISMATCH,
      `The provided serial ${expected} did not match the expected serial ${actual}.`,
      CONTEXTUALIZED,
    ),

  unresolvedVettingReference: (reference: string, reason: string) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.UNRESOLVED_VETTING_REFERENCE,
      `The vetted package reference ${reference} does not match any package in the package store. Reason: ${reason}`,
      CONTEXTUALIZED,
    ),

  ambiguousVettingReference: (reference: string, matching: readonly string[]) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.AMBIGUOUS_VETTING_REFERENCE,
      `The package reference ${reference} matches multiple packages: ${matching.join(", ")}`,
      CONTEXTUALIZED,
    ),

  noPreferredPackages: (reason: string) =>
    new SandboxError(
      PACKAGE_ERROR_CODES.NO_PREFERRED_PACKAGES_FOUND,
      `Failed to compute package preferences. Reason: ${reason}`,
      { definiteAnswer: false },
    ),
};
