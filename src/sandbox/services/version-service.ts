import type { ServiceImplementation } from "../grpc-handler.js";

/** The limits the sandbox advertises; Canton's defaults, which the sandbox's services enforce. */
export const SANDBOX_LIMITS = {
  maxRightsPerUser: 1000,
  maxUsersPageSize: 1000,
  maxPartiesPageSize: 10000,
  maxVettedPackagesPageSize: 100,
  /** Canton: offset checkpoint cache update interval (15 s) + idle stream checkpoint timeout (60 s). */
  maxOffsetCheckpointEmissionDelaySeconds: 75,
} as const;

/**
 * `version`: the Canton release the sandbox reports, as Canton reports its own (a release, e.g.
 * `3.5.10`; a build of main says `3.6.0-SNAPSHOT`). Served without a token, as Canton serves it.
 */
export function versionService(version: string): ServiceImplementation {
  const response = {
    version,
    features: {
      experimental: {
        // No time service: the sandbox runs on wall-clock time.
        staticTime: { supported: false },
        commandInspectionService: { supported: false },
      },
      userManagement: {
        supported: true,
        maxRightsPerUser: SANDBOX_LIMITS.maxRightsPerUser,
        maxUsersPageSize: SANDBOX_LIMITS.maxUsersPageSize,
      },
      partyManagement: { maxPartiesPageSize: SANDBOX_LIMITS.maxPartiesPageSize },
      offsetCheckpoint: {
        maxOffsetCheckpointEmissionDelay: {
          seconds: SANDBOX_LIMITS.maxOffsetCheckpointEmissionDelaySeconds,
          nanos: 0,
        },
      },
      packageFeature: { maxVettedPackagesPageSize: SANDBOX_LIMITS.maxVettedPackagesPageSize },
    },
  };
  return {
    serviceName: "com.daml.ledger.api.v2.VersionService",
    unary: {
      GetLedgerApiVersion: async () => response,
    },
  };
}
