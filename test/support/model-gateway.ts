import { BehaviorSubject, Subject, type Subscription } from "rxjs";
import { subscriberGrant } from "../../src/endpoints/stream-authorization.js";
import { caseOffset, isOffsetCheckpoint } from "../../src/endpoints/stream-position.js";
import { subscriberStream } from "../../src/endpoints/subscriber-stream.js";
import { errorFrameBody, isGatewayFault } from "../../src/errors/index.js";
import { SharedStreams } from "../../src/fanout/shared-streams.js";
import type { FanoutEvents } from "../../src/fanout/subscription.js";
import type { LedgerStreamPurpose } from "../../src/limits/ledger-stream-budget.js";
import { type LedgerYes, type ModelLedger, type ModelToken, updatesRequest } from "./model-ledger.js";

/**
 * The gateway's side of the model-based test of stream authorization: subscribers built exactly
 * as a WebSocket session builds them (subscriberStream over the app's SharedStreams, a grant
 * each, the client's demand, in-band renewals that passed the intake) over the model ledger's
 * /v2/updates endpoint, and the invariant checked at every element one of them is sent
 * (docs/security.md, "The authorization invariant"; DESIGN.md "Authorization invariant"), from
 * what the ledger said, never from the gateway's own bookkeeping.
 */

export interface GatewaySettings {
  /** 0: no re-checks (a yes lasts until the token expires). */
  readonly recheckIntervalMs: number;
  readonly ledgerAwayGraceMs: number;
  readonly historyBytes: number;
  readonly lagBytes: number;
  readonly catchUpBuffer: number;
  readonly rotateBeforeExpiryMs: number;
}

const offsetOf = caseOffset("update");

interface Delivery {
  readonly offset: number;
  readonly checkpoint: boolean;
  readonly at: number;
}

/** One client's stream of /v2/updates for `parties` from `begin`, as its session subscribes it. */
export class ModelSubscriber {
  readonly demand$ = new BehaviorSubject<boolean>(true);
  /** Tokens the client sent (its first and its renewals, past the intake): all its own. */
  readonly tokens: ModelToken[];
  readonly delivered: Delivery[] = [];
  /** The last transaction it was sent (its begin before any). */
  lastTransaction: number;
  last: { offset: number; checkpoint: boolean };
  ended: { error?: unknown } | undefined;
  left = false;
  readonly renewalsRefused: unknown[] = [];
  readonly #renewals = new Subject<string>();
  readonly #subscription: Subscription;

  constructor(
    readonly id: number,
    readonly parties: readonly string[],
    readonly begin: number,
    token: ModelToken,
    gateway: ModelGateway,
  ) {
    this.tokens = [token];
    this.lastTransaction = begin;
    this.last = { offset: begin, checkpoint: false };
    const { ledger, settings } = gateway;
    const now = () => Date.now();
    this.#subscription = subscriberStream({
      endpoint: ledger.endpoint,
      request: updatesRequest(parties, begin),
      token: token.text,
      grant: subscriberGrant(token.text, settings.recheckIntervalMs, settings.ledgerAwayGraceMs, now),
      recheckIntervalMs: settings.recheckIntervalMs,
      demand$: this.demand$,
      fanout: gateway.fanout,
      renewals: {
        tokens$: this.#renewals,
        renewed: () => undefined,
        refused: (error) => this.renewalsRefused.push(error),
      },
      now,
    }).subscribe({
      next: (text) => gateway.delivered(this, text),
      error: (error: unknown) => {
        this.ended = { error };
      },
      complete: () => {
        this.ended = {};
      },
    });
  }

  get open(): boolean {
    return this.ended === undefined && !this.left;
  }

  get label(): string {
    return `s${this.id}[${this.parties.join(",")} from ${this.begin}, ${this.tokens.map((t) => t.label).join(" then ")}]`;
  }

  /** A renewal frame whose token passed the intake (the gateway's verifier, the same user). */
  renew(token: ModelToken): void {
    this.tokens.push(token);
    this.#renewals.next(token.text);
  }

  leave(): void {
    this.left = true;
    this.#subscription.unsubscribe();
  }
}

export class ModelGateway {
  readonly fanout: SharedStreams;
  readonly subscribers: ModelSubscriber[] = [];
  /** What broke the invariant, in the order seen. */
  readonly violations: string[] = [];
  readonly #foreign: (() => void)[] = [];
  #nextId = 1;

  constructor(
    readonly ledger: ModelLedger,
    readonly settings: GatewaySettings,
    events?: FanoutEvents,
  ) {
    this.fanout = new SharedStreams({
      ...(events ? { events } : {}),
      historyBytes: settings.historyBytes,
      lagBytes: settings.lagBytes,
      catchUpBuffer: settings.catchUpBuffer,
      rotateBeforeExpiryMs: settings.rotateBeforeExpiryMs,
    });
  }

  subscribe(parties: readonly string[], begin: number, token: ModelToken): ModelSubscriber {
    const subscriber = new ModelSubscriber(this.#nextId++, parties, begin, token, this);
    this.subscribers.push(subscriber);
    return subscriber;
  }

  /**
   * Slots of the stream budget taken by other streams of the gateway (other clients'
   * subscriptions, other subscribers' questions) for `ms`, or until `unsaturate`.
   */
  saturate(count: number, purpose: LedgerStreamPurpose, ms: number): void {
    for (let i = 0; i < count; i += 1) {
      const release = this.ledger.budget.claim(
        () => undefined,
        () => undefined,
        purpose,
      );
      this.#foreign.push(release);
      setTimeout(release, ms);
    }
  }

  /** The other streams end. */
  unsaturate(): void {
    for (const release of this.#foreign.splice(0)) release();
  }

  close(): void {
    this.unsaturate();
    for (const subscriber of this.subscribers) subscriber.leave();
  }

  /** An element sent to a subscriber: the invariant, checked now. */
  delivered(subscriber: ModelSubscriber, text: string): void {
    const now = Date.now();
    const offset = Number(offsetOf(text));
    const checkpoint = isOffsetCheckpoint(text);
    subscriber.delivered.push({ offset, checkpoint, at: now });
    const violation = this.#order(subscriber, offset, checkpoint) ?? this.#authorized(subscriber, now);
    if (violation !== undefined)
      this.violations.push(
        `${subscriber.label} was sent ${checkpoint ? "a checkpoint" : "transaction"} at ${offset} (t=${now}): ${violation}`,
      );
    subscriber.last = { offset, checkpoint };
    if (!checkpoint) subscriber.lastTransaction = offset;
  }

  /**
   * The end of a run, once every subscriber had the time to read on: one still open has every
   * transaction of its filter; one that ended, ended with a clear error, not a silent completion
   * of its open-ended stream and not a gateway fault.
   */
  checkEnds(): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.left) continue;
      if (subscriber.ended === undefined) {
        const missing = this.ledger.matching(subscriber.parties, subscriber.lastTransaction);
        if (missing.length > 0)
          this.violations.push(
            `${subscriber.label} is open and reading, and was never sent ${missing.map((t) => t.offset).join(", ")} (ledger end ${this.ledger.end})`,
          );
      } else if (subscriber.ended.error === undefined) {
        this.violations.push(`${subscriber.label}'s open-ended stream completed`);
      } else if (isGatewayFault(subscriber.ended.error)) {
        this.violations.push(
          `${subscriber.label} ended with a gateway fault: ${String(subscriber.ended.error)} ${(subscriber.ended.error as Error).stack ?? ""}`,
        );
      }
    }
  }

  /** How each subscriber stands, for a failure's message. */
  describe(): string {
    return this.subscribers
      .map((s) => {
        const end = s.left
          ? "left"
          : s.ended === undefined
            ? "open"
            : s.ended.error === undefined
              ? "completed"
              : `ended ${errorFrameBody(s.ended.error).code}`;
        const got = s.delivered.map((d) => `${d.checkpoint ? "c" : ""}${d.offset}@${d.at}`).join(" ");
        return `${s.label}: ${end}; got ${got || "nothing"}`;
      })
      .join("\n");
  }

  /** In order, once, nothing skipped: the next transaction of its filter, or a checkpoint past what it had. */
  #order(subscriber: ModelSubscriber, offset: number, checkpoint: boolean): string | undefined {
    const { last } = subscriber;
    if (!Number.isSafeInteger(offset)) return "no offset";
    if (checkpoint) {
      if (offset < last.offset || (offset === last.offset && last.checkpoint))
        return `a checkpoint not after what it had (${last.checkpoint ? "checkpoint" : "offset"} ${last.offset})`;
      const skipped = this.ledger.matching(subscriber.parties, subscriber.lastTransaction, offset);
      if (skipped.length > 0)
        return `a checkpoint past transactions it was never sent: ${skipped.map((t) => t.offset).join(", ")}`;
      return undefined;
    }
    const transaction = this.ledger.transactions[offset - 1];
    if (transaction === undefined) return "no such transaction";
    if (!transaction.visibleTo.some((party) => subscriber.parties.includes(party)))
      return `visible to ${transaction.visibleTo.join(",")} only`;
    const next = this.ledger.matching(subscriber.parties, subscriber.lastTransaction)[0];
    if (offset <= subscriber.lastTransaction) return `again or back (it had ${subscriber.lastTransaction})`;
    if (next !== undefined && next.offset < offset) return `transactions skipped from ${next.offset}`;
    return undefined;
  }

  /**
   * The ledger said yes, on one of the subscriber's own tokens (still valid now), to a call of
   * its query, judged with rights that let its user read every party of it, at most twice the
   * re-check interval ago (when re-checks are on).
   */
  #authorized(subscriber: ModelSubscriber, now: number): string | undefined {
    const { recheckIntervalMs } = this.settings;
    const own = new Map(subscriber.tokens.map((token) => [token.text, token]));
    const covers = (yes: LedgerYes) =>
      own.has(yes.token) &&
      sameParties(yes.parties, subscriber.parties) &&
      subscriber.parties.every((party) => yes.readable.includes(party));
    let newest: LedgerYes | undefined;
    for (const yes of this.ledger.yeses) {
      if (!covers(yes)) continue;
      const token = own.get(yes.token) as ModelToken;
      if (token.expiresAt <= now) continue;
      if (newest === undefined || yes.judgedAt > newest.judgedAt) newest = yes;
    }
    if (newest === undefined)
      return "the ledger never said yes to a call of its query on a valid token of its own";
    if (recheckIntervalMs > 0 && now - newest.judgedAt > 2 * recheckIntervalMs)
      return `the ledger's newest yes (call ${newest.call}, ${newest.purpose}) was judged at ${newest.judgedAt}, more than twice the re-check interval (${recheckIntervalMs} ms) ago`;
    return undefined;
  }
}

function sameParties(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((party) => b.includes(party));
}
