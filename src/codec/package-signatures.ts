import type { SignatureResolver } from "../lf/index.js";

/**
 * What the Daml-aware JSON codec needs from the gateway's package cache: synchronous
 * signature lookups once the packages are loaded, and the async steps that load them.
 */
export interface PackageSignatures extends SignatureResolver {
  /** Whether this package's signatures are loaded (the hot path asks before awaiting). */
  has(packageId: string): boolean;
  /** Loads the signatures of these packages with the request's token; coalesces fetches. */
  ensure(packageIds: Iterable<string>, token: string | undefined): Promise<void>;
  /** `#name` -> the package id the ledger prefers for `party` (GetPreferredPackages). */
  resolvePackageName(name: string, party: string, token: string | undefined): Promise<string>;
  /**
   * What `resolvePackageName` would answer at once, from what it holds; undefined when it would
   * ask the ledger (or cannot tell). Absent: every name is resolved through `resolvePackageName`.
   */
  preferredPackageNow?(name: string, party: string): string | undefined;
}
