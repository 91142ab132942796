import {
  type ApiVersion,
  type Availability,
  availableIn,
  isKnownApiVersion,
  KNOWN_API_VERSIONS,
} from "./api-version.js";

/** `ledger.api-version`: `auto` (the participant's, asked) or a known release, pinned. */
export type ApiVersionSetting = "auto" | ApiVersion;

/** Whether the served release has something: `unknown` while the participant has not said (auto). */
export type Served = "yes" | "no" | "unknown";

/**
 * The known release served for a participant's reported one: the same release (a pre-release of
 * it, e.g. main's `3.6.0-SNAPSHOT`, counts as it), else the newest known one older than it (a
 * participant has at least what its older releases had, and the gateway must not offer what it
 * may not have), else the oldest known. `exact` is false in the last two cases, and for a text
 * that is no version at all (served as the oldest known).
 */
export function nearestKnownApiVersion(reported: string): { version: ApiVersion; exact: boolean } {
  const release = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(reported.trim());
  const oldest = KNOWN_API_VERSIONS[0];
  if (release === null) return { version: oldest, exact: false };
  const numbers = release.slice(1, 4).map(Number) as [number, number, number];
  const name = numbers.join(".");
  if (isKnownApiVersion(name)) return { version: name, exact: true };
  let nearest: ApiVersion | undefined;
  for (const known of KNOWN_API_VERSIONS) if (compare(parts(known), numbers) < 0) nearest = known;
  return { version: nearest ?? oldest, exact: false };
}

const parts = (version: ApiVersion): [number, number, number] =>
  version.split(".").map(Number) as [number, number, number];

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return 0;
}

/** Bytes of the participant's reported text kept (longer ones are cut: it is a label, not data). */
const REPORTED_BYTES = 64;
/** Int32 slots: a write sequence (odd while a write is under way), the served release's index + 1, the reported text's length. */
const HEADER_SLOTS = 4;
const SEQUENCE = 0;
const SERVED = 1;
const REPORTED_LENGTH = 2;

/** The memory one gateway's threads share the served release in: made once, handed to every worker. */
export function servedApiVersionBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_SLOTS * 4 + REPORTED_BYTES);
}

/**
 * The Canton release the gateway serves, one for all of its worker threads: they share it in
 * shared memory, so a worker that learns the participant's release (at its start, after its
 * reconnect) changes it for every worker at once, and no two workers serve different APIs.
 * Pinned (`ledger.api-version`), it is that release from the start and never changes; `auto`,
 * it is unknown until the participant first answered, and then the nearest known release to
 * what it reported (nearestKnownApiVersion).
 */
export class ServedApiVersion {
  private readonly header: Int32Array;
  private readonly reportedBytes: Uint8Array;

  constructor(
    readonly setting: ApiVersionSetting,
    buffer: SharedArrayBuffer = servedApiVersionBuffer(),
  ) {
    this.header = new Int32Array(buffer, 0, HEADER_SLOTS);
    this.reportedBytes = new Uint8Array(buffer, HEADER_SLOTS * 4, REPORTED_BYTES);
    if (setting !== "auto") Atomics.store(this.header, SERVED, KNOWN_API_VERSIONS.indexOf(setting) + 1);
  }

  /** The release served now; undefined in `auto` mode before the participant's first answer. */
  current(): ApiVersion | undefined {
    const index = Atomics.load(this.header, SERVED);
    return index === 0 ? undefined : KNOWN_API_VERSIONS[index - 1];
  }

  /** Whether the release served now has what `availability` marks (unmarked, or marked deprecated only: every release has it). */
  serves(availability: Availability | undefined): Served {
    // Deprecated in some releases only is still in every one.
    if (availability?.since === undefined && availability?.removedIn === undefined) return "yes";
    const version = this.current();
    if (version === undefined) return "unknown";
    return availableIn(availability, version) ? "yes" : "no";
  }

  /** What the participant last reported (cut to 64 bytes), undefined before its first answer. */
  reported(): string | undefined {
    for (;;) {
      const before = Atomics.load(this.header, SEQUENCE);
      if (before % 2 === 1) continue;
      const length = Atomics.load(this.header, REPORTED_LENGTH);
      const text = length === 0 ? undefined : new TextDecoder().decode(this.reportedBytes.slice(0, length));
      if (Atomics.load(this.header, SEQUENCE) === before) return text;
    }
  }

  /**
   * Takes the participant's answer: in `auto` mode its nearest known release is served from now
   * on. `known`: the reported release is a known one and the one served (always so in `auto`
   * mode for a known release; pinned, only when the participant runs the pinned release);
   * `changed`: the served release changed.
   */
  record(reported: string): { served: ApiVersion; known: boolean; changed: boolean } {
    const nearest = nearestKnownApiVersion(reported);
    const bytes = new TextEncoder().encode(reported).slice(0, REPORTED_BYTES);
    const previous = this.current();
    const served = this.setting === "auto" ? nearest.version : this.setting;
    Atomics.add(this.header, SEQUENCE, 1);
    this.reportedBytes.set(bytes);
    Atomics.store(this.header, REPORTED_LENGTH, bytes.length);
    Atomics.store(this.header, SERVED, KNOWN_API_VERSIONS.indexOf(served) + 1);
    Atomics.add(this.header, SEQUENCE, 1);
    return { served, known: nearest.exact && nearest.version === served, changed: previous !== served };
  }

  /** Serves `version` while nothing else is known (`auto` mode, a participant that does not say); returns the release served. */
  assume(version: ApiVersion): ApiVersion {
    Atomics.compareExchange(this.header, SERVED, 0, KNOWN_API_VERSIONS.indexOf(version) + 1);
    return this.current() as ApiVersion;
  }
}
