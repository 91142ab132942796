import type { Observable, Subscribable } from "rxjs";

/**
 * What the fan-out needs of one subscriber's request, computed by the stream endpoint (which
 * knows its request forms): the key that says which subscribers may share a stream, the
 * subscriber's starting offset, and its request from any other offset.
 */
export interface ShareSpec {
  /**
   * Equal for requests whose elements are the same from any offset: the endpoint path (the
   * element shape), and the normalized request minus `beginExclusive` (legacy forms rewritten
   * first). Opaque here.
   */
  readonly key: string;
  /** The subscriber's `beginExclusive` (0: the ledger's begin). */
  readonly begin: number;
  /** The subscriber's request, starting after `offset` instead of `begin`. */
  from(offset: number): unknown;
  /**
   * Asks the ledger whether this subscriber's token may read this request, before it joins a
   * running stream without a call of its own. Resolves with when the question was asked once the
   * ledger said yes; with undefined when it gave no answer in time (the subscriber then starts on
   * a call of its own, which the ledger judges itself: silence is never a yes); rejects with the
   * ledger's refusal (or the stream budget's). `reached`: the running stream's position, an
   * offset the ledger is known to have (a probe from offset 0 may read up to offset 1 once it is
   * at least 1). Absent, the subscriber always starts on its own call and splices in once that
   * call has delivered an element: the ledger then admitted it.
   */
  admit?(reached: number): Promise<number | undefined>;
}

/** How the fan-out opens a ledger stream (one gRPC call) for a request and a token. */
export interface UpstreamSource {
  open(request: unknown, token: string | undefined, demand$: Subscribable<boolean>): Observable<string>;
  /** The element's offset; every element of a shareable stream has one. */
  offsetOf(element: string): number | undefined;
  /**
   * Whether the element is an offset checkpoint, whose offset may equal the transaction's (or
   * completion's) before it, or the subscriber's `beginExclusive`.
   */
  isCheckpoint(element: string): boolean;
  /**
   * Whether the error of a call is the ledger refusing its token (expired, rights revoked): for
   * the shared call, the owner's error alone, not every member's.
   */
  isTokenRefusal(error: unknown): boolean;
  /** When the ledger stops accepting the token (its `exp`, epoch ms); undefined: never. */
  expiryOf(token: string | undefined): number | undefined;
  /**
   * When the ledger's yes to this subscriber's fan-out admission (its request from its offset),
   * on `token`, still its current one, was asked, if that yes is younger than the re-check
   * interval; undefined otherwise (absent: never). A joiner of the same token, request and offset
   * is admitted with it instead of a probe of its own (SharedStreams).
   */
  freshYes?(token: string | undefined): number | undefined;
  /**
   * Told the ledger's yes to its admission (when it was asked) before it reads any shared
   * element: the subscriber's grant, which its gate reads (src/endpoints/stream-authorization.ts).
   * A method of the source, not a closure of the request: the subscriber's membership keeps it.
   */
  admitted?(askedAt: number): void;
}

/** One subscriber as the transport sees it. */
export interface MemberRequest {
  /** Label of the stream kind for metrics: the endpoint path template. */
  readonly endpoint: string;
  readonly share: ShareSpec;
  readonly source: UpstreamSource;
  /** The subscriber's own token: its own calls (catch-up) and, as owner, the shared call. */
  readonly token: string | undefined;
  /**
   * Tokens that replace it, each already admitted by the ledger (a client renewing in band):
   * the subscriber's calls move onto the latest at once, from where they are, since the ledger
   * ends a call when the token it was opened with expires.
   */
  readonly renewed$?: Subscribable<string>;
  /** The subscriber's readiness (its socket below its high-water mark). */
  readonly demand$: Subscribable<boolean>;
  /**
   * Given, once the subscriber joined, a reader of where it stands: the offset of the last
   * element it was handed and of the upstream's last (for lag metrics, read when they are asked).
   */
  readonly position?: PositionFollower;
  /** Told what happens to this subscriber as it happens (its span's events). */
  readonly told?: MemberEvents;
}

/** Where a member stands in its shared stream. */
export interface SharedPosition {
  /** The offset of the last element handed to the subscriber. */
  readonly last: number;
  /** The offset of the last element of the shared upstream. */
  readonly newest: number;
}

/** What tells a member's position when asked (its place in its shared stream). */
export interface SharedPositionReader {
  sharedPosition(): SharedPosition;
}

/** What follows a member's position (its socket's sink, for the lag metrics). */
interface PositionFollower {
  followShared(reader: SharedPositionReader): void;
}

/** What the fan-out tells of one subscriber: admission, joins, catch-ups, detaches. */
interface MemberEvents {
  event(name: string, attributes?: Readonly<Record<string, string | number | boolean>>): void;
}

/** How a subscriber came to be on its own call instead of the shared one. */
export type CatchUpCause = "late_join" | "detach" | "rejoin";

/** The ledger's answer to a subscriber's admission probe (see ShareSpec.admit). */
export type AdmissionOutcome = "admitted" | "refused" | "unanswered";

/** Why a shared upstream ended. */
export type UpstreamCloseReason = "last_member_left" | "completed" | "error";

/**
 * Why the upstream moved onto another token: its owner renewed its own, or the owner's was about
 * to expire and another member's expires later.
 */
export type RotationCause = "renewal" | "expiry";

export const ROTATION_CAUSES: readonly RotationCause[] = ["renewal", "expiry"];

/** Members by what they read from. */
export type MemberMode = "shared" | "catching_up" | "own";

export const MEMBER_MODES: readonly MemberMode[] = ["shared", "catching_up", "own"];
export const CATCH_UP_CAUSES: readonly CatchUpCause[] = ["late_join", "detach", "rejoin"];
export const ADMISSION_OUTCOMES: readonly AdmissionOutcome[] = ["admitted", "refused", "unanswered"];
export const UPSTREAM_CLOSE_REASONS: readonly UpstreamCloseReason[] = [
  "last_member_left",
  "completed",
  "error",
];

/** The fan-out's events, for metrics (src/metrics wires them; the fan-out knows no registry). */
export interface FanoutEvents {
  upstreamOpened?(endpoint: string): void;
  upstreamClosed?(endpoint: string, reason: UpstreamCloseReason): void;
  /** The upstream was reopened on another member's token (its owner left or was refused). */
  handover?(endpoint: string): void;
  /** A member entered `mode` (undefined: it left), from `previous` (undefined: it arrived). */
  memberMode?(endpoint: string, mode: MemberMode | undefined, previous: MemberMode | undefined): void;
  /** A member joined the shared stream: at once, or by splicing in after catching up. */
  joined?(endpoint: string, how: "direct" | "splice"): void;
  catchUp?(endpoint: string, cause: CatchUpCause): void;
  /**
   * An admission probe was answered: a short call on a joining subscriber's token (the ledger
   * judges each token) that is not an upstream stream; subscribers asking the same question at
   * the same time (same request, offset and token) share one.
   */
  admission?(endpoint: string, outcome: AdmissionOutcome): void;
  /**
   * A joining subscriber was admitted with a member's fresh yes on the same token to the same
   * request and offset: no probe (see SharedStreams.open).
   */
  sharedAdmission?(endpoint: string): void;
  /** A member over its high-water mark was moved onto its own call. */
  detached?(endpoint: string): void;
  /** The upstream was reopened on a token that expires later (see RotationCause). */
  rotated?(endpoint: string, cause: RotationCause): void;
}
