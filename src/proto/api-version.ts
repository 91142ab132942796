/**
 * The Canton releases whose Ledger API the gateway and the sandbox know, oldest first. A
 * participant reports its release in `GetLedgerApiVersion`; the gateway serves the operations,
 * shapes and errors of the known release nearest to it, and the sandbox speaks the one it is
 * started as. Everything that differs between them is marked with an `Availability` where it is
 * declared (a route, a stream endpoint, a sandbox method), so one table serves every release.
 */
export const KNOWN_API_VERSIONS = ["3.5.4", "3.5.10", "3.6.0"] as const;

export type ApiVersion = (typeof KNOWN_API_VERSIONS)[number];

/** The release production runs today: the sandbox's default, and the gateway's before it has asked. */
export const DEFAULT_API_VERSION: ApiVersion = "3.5.10";

/**
 * The releases that have something: from `since` (the oldest known when absent) up to, not
 * including, `removedIn`; deprecated from `deprecatedSince` on (something deprecated in every
 * release says `deprecated: true` where it is declared instead).
 */
export interface Availability {
  readonly since?: ApiVersion;
  readonly deprecatedSince?: ApiVersion;
  readonly removedIn?: ApiVersion;
}

const rank = (version: ApiVersion): number => KNOWN_API_VERSIONS.indexOf(version);

export function availableIn(availability: Availability | undefined, version: ApiVersion): boolean {
  if (availability === undefined) return true;
  const at = rank(version);
  if (availability.since !== undefined && at < rank(availability.since)) return false;
  if (availability.removedIn !== undefined && at >= rank(availability.removedIn)) return false;
  return true;
}

/** Whether something `deprecated` in every release, or deprecated since a release of its `availability`, is in `version`. */
export function deprecatedIn(
  deprecated: boolean | undefined,
  availability: Availability | undefined,
  version: ApiVersion,
): boolean {
  if (deprecated === true) return true;
  const since = availability?.deprecatedSince;
  return since !== undefined && rank(version) >= rank(since);
}

export function isKnownApiVersion(text: string): text is ApiVersion {
  return (KNOWN_API_VERSIONS as readonly string[]).includes(text);
}
