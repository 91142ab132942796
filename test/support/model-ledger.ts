import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { Observable, type Subscription } from "rxjs";
import { ledgerStreamEndpoints } from "../../src/endpoints/ledger-streams.js";
import type { RouteDeps } from "../../src/endpoints/route-deps.js";
import type { StreamEndpoint } from "../../src/endpoints/stream-endpoint.js";
import { ledgerStreamsExhaustedError } from "../../src/errors/index.js";
import { decodeTokenClaims, userKey } from "../../src/jwt/bearer-token.js";
import {
  LedgerStreamBudget,
  type LedgerStreamBudgetSettings,
  type LedgerStreamPurpose,
  ledgerStreamBudgetBuffer,
} from "../../src/limits/ledger-stream-budget.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { encodeStatusDetails, STATUS_DETAILS_KEY } from "../../src/proto/status-details.js";

/**
 * A participant's Ledger API in process, for the model-based test of stream authorization
 * (test/fanout/authorization-model.test.ts): transactions each visible to some parties, users
 * whose CanReadAs rights the test changes, tokens, and GetUpdates calls that it judges as Canton
 * does when they reach it: a token it cannot resolve is UNAUTHENTICATED, a filter party its user
 * cannot read (now) PERMISSION_DENIED, otherwise the matching transactions from the call's begin
 * (a bounded call ends at its end; an open-ended one follows new transactions and sends an
 * OffsetCheckpoint every checkpoint interval once it is at the ledger end). The gateway reaches it
 * through the production endpoint (`ledgerStreamEndpoints`, so `open`, `probe`, `admit` and
 * `share` are the gateway's own) over a ledger client of its own that claims a real
 * LedgerStreamBudget slot per call, as LedgerClient.serverStream does.
 *
 * Faults: a graceful GOAWAY (calls told their connection closes, failed UNAVAILABLE after a
 * grace), the ledger going away (every call fails UNAVAILABLE at once, and new calls fail at once
 * until it is back), freezing (calls neither reach it nor get answers), a latency
 * before each call's first answer, errors on running calls, and Canton's ongoing authorization
 * (a running call whose user lost a right ends STALE_STREAM_AUTHORIZATION, one whose token
 * expired ACCESS_TOKEN_EXPIRED).
 *
 * It is also the oracle: every call it said yes to is recorded (`yeses`) with its token, its
 * parties, when it judged it and the rights the user had then. A yes is said when the ledger
 * sends the call's first message (an element, a checkpoint, or its end): until then the gateway
 * cannot know it.
 */

export interface ModelToken {
  readonly text: string;
  /** For counterexamples: the user and a serial, never the token. */
  readonly label: string;
  readonly user: string;
  /** Epoch ms. */
  readonly expiresAt: number;
  /** Parties a token is restricted to (of its user's); undefined: all of its user's. */
  readonly scope: readonly string[] | undefined;
  /** Signed by nobody the ledger trusts: UNAUTHENTICATED, whatever it claims. */
  readonly forged: boolean;
}

export interface ModelTransaction {
  readonly offset: number;
  readonly visibleTo: readonly string[];
}

/** A call the ledger said yes to: the authorization the gateway may rely on. */
export interface LedgerYes {
  readonly call: number;
  readonly token: string;
  readonly purpose: LedgerStreamPurpose;
  readonly parties: readonly string[];
  /** When the ledger judged it (the gateway asked at this time or before). */
  readonly judgedAt: number;
  /** The user's readable parties when judged. */
  readonly readable: readonly string[];
}

type CallPhase = "sent" | "refused" | "accepted" | "ended";

interface ModelCall {
  readonly id: number;
  readonly token: string | undefined;
  readonly purpose: LedgerStreamPurpose;
  readonly parties: readonly string[];
  readonly begin: number;
  readonly end: number | undefined;
  readonly subscriber: { next(bytes: Buffer): void; error(error: unknown): void; complete(): void };
  /** Told when the ledger closes the call's connection gracefully (LedgerClient's onDraining). */
  readonly draining: ((closing: unknown) => void) | undefined;
  phase: CallPhase;
  refusal?: ServiceError;
  judgedAt?: number;
  readable?: readonly string[];
  /** Not before this time does the ledger send anything on it (its latency). */
  answerAt: number;
  answered: boolean;
  ready: boolean;
  /** Offsets up to here were looked at (sent when matching). */
  cursor: number;
  lastOffset: number;
  lastCheckpoint: boolean;
  checkpointDue: boolean;
  expiry?: ReturnType<typeof setTimeout>;
}

interface PendingUnary {
  readonly token: string | undefined;
  received: boolean;
  answerAt: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface ModelLedgerOptions {
  readonly parties: readonly string[];
  /** CanReadAs rights per user at the start. */
  readonly rights: Readonly<Record<string, readonly string[]>>;
  readonly budget: LedgerStreamBudgetSettings;
  readonly checkpointIntervalMs: number;
  /** The gateway's websocket-config.resume-window (0: a lost call is not reopened). */
  readonly resumeWindowMs: number;
}

/** Messages one call sends per turn of the ledger, so that calls interleave. */
const MESSAGES_PER_TURN = 2;

const GRPC_REASONS = {
  stale: "STALE_STREAM_AUTHORIZATION",
  expired: "ACCESS_TOKEN_EXPIRED",
} as const;

let statusDetails: Record<keyof typeof GRPC_REASONS, Buffer> | undefined;

/** Canton's ABORTED errors that end a stream for its token (ErrorInfo reason, category 2). */
function abortedDetails(reason: keyof typeof GRPC_REASONS): Buffer {
  statusDetails ??= {
    stale: details(GRPC_REASONS.stale),
    expired: details(GRPC_REASONS.expired),
  };
  return statusDetails[reason];
}

function details(reason: string): Buffer {
  return encodeStatusDetails({
    code: status.ABORTED,
    message: `${reason}(2,model): the ledger ended the stream`,
    errorInfos: [{ reason, domain: "", metadata: { category: "2" } }],
    requestInfos: [],
    retryInfos: [],
    resourceInfos: [],
  });
}

function grpcError(code: status, message: string, statusDetails?: Buffer): ServiceError {
  const metadata = new Metadata();
  if (statusDetails) metadata.set(STATUS_DETAILS_KEY, statusDetails);
  return Object.assign(new Error(`${code} ${status[code]}: ${message}`), {
    code,
    details: message,
    metadata,
  });
}

/** A JWT as clients send them: decodable by the gateway (its `exp`), signed or not as the model says. */
function jwt(payload: Record<string, unknown>, signature: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(payload)}.${signature}`;
}

type Json = Record<string, unknown>;

/** The parties of a GetUpdatesRequest's filter (3.5 form, as the endpoint sends it). */
function filterParties(request: Json): string[] {
  const format = request.updateFormat as
    | { includeTransactions?: { eventFormat?: { filtersByParty?: Json } } }
    | undefined;
  return Object.keys(format?.includeTransactions?.eventFormat?.filtersByParty ?? {}).sort();
}

/** A client's GetUpdatesRequest for `parties` from `begin` (3.5 form). */
export function updatesRequest(parties: readonly string[], begin: number): Json {
  return {
    beginExclusive: begin,
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: Object.fromEntries(parties.map((party) => [party, { cumulative: [] }])),
          verbose: false,
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
}

export class ModelLedger {
  readonly budget: LedgerStreamBudget;
  /** The production /v2/updates endpoint over this ledger. */
  readonly endpoint: StreamEndpoint;
  readonly transactions: ModelTransaction[] = [];
  readonly yeses: LedgerYes[] = [];
  readonly #options: ModelLedgerOptions;
  readonly #rights = new Map<string, Set<string>>();
  readonly #tokens = new Map<string, ModelToken>();
  readonly #calls = new Set<ModelCall>();
  readonly #unaries = new Set<PendingUnary>();
  readonly #checkpoints: ReturnType<typeof setInterval>;
  #nextCall = 1;
  #nextToken = 1;
  #wakeScheduled = false;
  #frozen = false;
  #away = false;
  #latencyMs = 0;
  /** Calls made, by purpose and outcome, for the report of a run. */
  readonly stats = { calls: 0, refused: 0, yes: 0, failed: 0 };

  constructor(options: ModelLedgerOptions) {
    this.#options = options;
    for (const [user, parties] of Object.entries(options.rights)) this.#rights.set(user, new Set(parties));
    this.budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), options.budget);
    const endpoint = ledgerStreamEndpoints(this.#deps()).find((e) => e.path === "/v2/updates");
    if (endpoint === undefined) throw new Error("no /v2/updates endpoint");
    this.endpoint = endpoint;
    this.#checkpoints = setInterval(() => {
      for (const call of this.#calls) if (call.end === undefined) call.checkpointDue = true;
      this.#wake();
    }, options.checkpointIntervalMs);
  }

  get end(): number {
    return this.transactions.length;
  }

  token(text: string | undefined): ModelToken | undefined {
    return text === undefined ? undefined : this.#tokens.get(text);
  }

  mint(
    user: string,
    options: { lifetimeMs: number; scope?: readonly string[]; forged?: boolean },
  ): ModelToken {
    const serial = this.#nextToken++;
    const expiresAt = Math.floor((Date.now() + options.lifetimeMs) / 1000) * 1000;
    const token: ModelToken = {
      text: jwt(
        { sub: user, scope: "daml_ledger_api", exp: expiresAt / 1000, jti: `model-${serial}` },
        options.forged ? "forged" : "model",
      ),
      label: `${user}#${serial}${options.forged ? "(forged)" : ""}${options.scope ? `[${options.scope.join(",")}]` : ""}`,
      user,
      expiresAt,
      scope: options.scope,
      forged: options.forged ?? false,
    };
    this.#tokens.set(token.text, token);
    return token;
  }

  /** The parties `token` may read now: its user's CanReadAs rights, within its scope. */
  readable(token: ModelToken | undefined, at: number): string[] {
    if (token === undefined || token.forged || token.expiresAt <= at) return [];
    const rights = this.#rights.get(token.user) ?? new Set<string>();
    return [...rights].filter((party) => token.scope === undefined || token.scope.includes(party)).sort();
  }

  grant(user: string, party: string): void {
    this.#rights.get(user)?.add(party);
  }

  revoke(user: string, party: string): void {
    this.#rights.get(user)?.delete(party);
  }

  commit(visibleTo: readonly string[]): ModelTransaction {
    const transaction = { offset: this.end + 1, visibleTo: [...visibleTo].sort() };
    this.transactions.push(transaction);
    this.#wake();
    return transaction;
  }

  /** The transactions a filter of `parties` gets in (after, upTo]. */
  matching(parties: readonly string[], after: number, upTo = this.end): ModelTransaction[] {
    return this.transactions
      .slice(Math.max(0, after), Math.max(0, upTo))
      .filter((transaction) => transaction.visibleTo.some((party) => parties.includes(party)));
  }

  /**
   * A graceful GOAWAY: every call is told its connection closes (the gateway moves the ones it can
   * onto a new one), and those still running after `graceMs` fail UNAVAILABLE.
   */
  goAway(graceMs: number): void {
    const closing = grpcError(status.UNAVAILABLE, "The ledger is closing the connection (GOAWAY)");
    const calls = [...this.#calls];
    for (const call of calls) call.draining?.(closing);
    setTimeout(() => {
      for (const call of calls) this.#fail(call, this.#unavailable());
    }, graceMs);
  }

  /** Every call fails as after a GOAWAY; `away`: new calls fail at once until `back`. */
  lose(away: boolean): void {
    this.#frozen = false;
    this.#away = away;
    for (const call of [...this.#calls]) this.#fail(call, this.#unavailable());
    for (const unary of [...this.#unaries]) {
      this.#unaries.delete(unary);
      unary.reject(this.#unavailable());
    }
  }

  back(): void {
    this.#away = false;
    this.#wake();
  }

  /** Calls neither reach the ledger nor get answers until `thaw`. */
  freeze(): void {
    this.#away = false;
    this.#frozen = true;
  }

  thaw(): void {
    this.#frozen = false;
    this.#wake();
  }

  /** Calls judged from now on send nothing for `ms`. */
  setLatency(ms: number): void {
    this.#latencyMs = ms;
  }

  /** Every call is answered as soon as it can be: the ledger recovered. */
  recover(): void {
    this.#frozen = false;
    this.#away = false;
    this.#latencyMs = 0;
    const now = Date.now();
    for (const call of this.#calls) call.answerAt = Math.min(call.answerAt, now);
    for (const unary of this.#unaries) unary.answerAt = Math.min(unary.answerAt, now);
    this.#wake();
  }

  /** The `nth` running call (modulo) fails with INTERNAL, a failure that says nothing about its token. */
  failCall(nth: number): void {
    const calls = [...this.#calls];
    const call = calls[nth % Math.max(1, calls.length)];
    if (call !== undefined) this.#fail(call, grpcError(status.INTERNAL, "the model ledger failed the call"));
  }

  /**
   * Canton's ongoing stream authorization (user-rights-check-interval): each running call whose
   * user can no longer read its parties ends ABORTED STALE_STREAM_AUTHORIZATION.
   */
  checkOngoing(): void {
    const now = Date.now();
    for (const call of [...this.#calls]) {
      if (call.phase !== "accepted") continue;
      const readable = this.readable(this.token(call.token), now);
      if (!call.parties.every((party) => readable.includes(party)))
        this.#fail(call, grpcError(status.ABORTED, "stale", abortedDetails("stale")));
    }
  }

  dispose(): void {
    clearInterval(this.#checkpoints);
    for (const call of this.#calls) clearTimeout(call.expiry);
  }

  #unavailable(): ServiceError {
    return grpcError(status.UNAVAILABLE, "GOAWAY received from the model ledger");
  }

  #deps(): RouteDeps {
    const ledger = {
      serverStream: (
        _service: string,
        _rpc: string,
        request: object,
        token: string | undefined,
        options: {
          demand$?: Observable<boolean>;
          purpose?: LedgerStreamPurpose;
          onDraining?: (closing: unknown) => void;
        } = {},
      ) => {
        const purpose = options.purpose ?? "subscription";
        const call$ = this.#call(request as Json, token, purpose, options.demand$, options.onDraining);
        // As LedgerClient.serverStream: the call opens once it holds a slot of its purpose.
        return new Observable<Buffer>((subscriber) => {
          let call: Subscription | undefined;
          const release = this.budget.claim(
            () => {
              call = call$.subscribe(subscriber);
            },
            (refusal) => subscriber.error(ledgerStreamsExhaustedError(refusal)),
            purpose,
            // As the gateway's wiring (src/gateway.ts): charged to the token's user.
            userKey(decodeTokenClaims(token ?? "") ?? {}),
          );
          return () => {
            call?.unsubscribe();
            release();
          };
        });
      },
      unary: (_service: string, _method: string, _request: object, token: string | undefined) =>
        new Promise((resolve, reject) => {
          this.#unaries.add({ token, received: false, answerAt: Number.POSITIVE_INFINITY, resolve, reject });
          this.#wake();
        }),
    };
    const json = {
      fromJson: async (_type: string, request: unknown) => request,
      wireText: () => (bytes: Buffer) => bytes.toString("utf8"),
    };
    return {
      ledger,
      json,
      protos: ledgerApiProtos(),
      resume: { windowMs: this.#options.resumeWindowMs },
    } as unknown as RouteDeps;
  }

  #call(
    request: Json,
    token: string | undefined,
    purpose: LedgerStreamPurpose,
    demand$: Observable<boolean> | undefined,
    draining: ((closing: unknown) => void) | undefined,
  ): Observable<Buffer> {
    return new Observable<Buffer>((subscriber) => {
      const begin = Number(request.beginExclusive ?? 0);
      const end = request.endInclusive === undefined ? undefined : Number(request.endInclusive);
      const call: ModelCall = {
        id: this.#nextCall++,
        token,
        purpose,
        parties: filterParties(request),
        begin,
        end,
        subscriber,
        draining,
        phase: "sent",
        answerAt: Number.POSITIVE_INFINITY,
        answered: false,
        ready: true,
        cursor: begin,
        lastOffset: begin,
        lastCheckpoint: false,
        checkpointDue: false,
      };
      this.stats.calls += 1;
      this.#calls.add(call);
      const demand = demand$?.subscribe((ready) => {
        call.ready = ready;
        if (ready) this.#wake();
      });
      this.#wake();
      return () => {
        demand?.unsubscribe();
        this.#end(call);
      };
    });
  }

  #end(call: ModelCall): void {
    call.phase = "ended";
    clearTimeout(call.expiry);
    this.#calls.delete(call);
  }

  #fail(call: ModelCall, error: unknown): void {
    if (call.phase === "ended") return;
    this.stats.failed += 1;
    this.#end(call);
    call.subscriber.error(error);
  }

  #wake(): void {
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      this.#turn();
    });
  }

  /** One turn of the ledger: calls received and judged, a few messages each, unary answers. */
  #turn(): void {
    const now = Date.now();
    let more = false;
    for (const unary of [...this.#unaries]) this.#answerUnary(unary, now);
    for (const call of [...this.#calls]) if (this.#serve(call, now)) more = true;
    if (more) this.#wake();
  }

  #answerUnary(unary: PendingUnary, now: number): void {
    if (this.#away) {
      this.#unaries.delete(unary);
      unary.reject(this.#unavailable());
      return;
    }
    if (this.#frozen) return;
    if (!unary.received) {
      unary.received = true;
      unary.answerAt = now + this.#latencyMs;
      if (this.#latencyMs > 0) setTimeout(() => this.#wake(), this.#latencyMs);
    }
    if (now < unary.answerAt) return;
    this.#unaries.delete(unary);
    const token = this.token(unary.token);
    // GetLedgerApiVersion: any caller whose claims resolve (public claims).
    if (token === undefined || token.forged || token.expiresAt <= now)
      unary.reject(grpcError(status.UNAUTHENTICATED, "The command is missing a (valid) JWT token"));
    else unary.resolve({ version: "3.5.0" });
  }

  /** Serves one call; true when it has more to send now. */
  #serve(call: ModelCall, now: number): boolean {
    if (call.phase === "ended") return false;
    if (this.#away) {
      this.#fail(call, this.#unavailable());
      return false;
    }
    if (this.#frozen) return false;
    if (call.phase === "sent") this.#judge(call, now);
    if (now < call.answerAt) return false;
    if (call.phase === "refused") {
      this.stats.refused += 1;
      this.#fail(call, call.refusal);
      return false;
    }
    for (let sent = 0; sent < MESSAGES_PER_TURN; sent += 1) {
      if (call.phase !== "accepted") return false;
      // An authorization call is always ready (no demand); a subscription pauses with its reader.
      if (!call.ready) return false;
      if (!this.#send(call)) return false;
    }
    return call.phase === "accepted";
  }

  #judge(call: ModelCall, now: number): void {
    const token = this.token(call.token);
    call.judgedAt = now;
    call.answerAt = now + this.#latencyMs;
    if (this.#latencyMs > 0) setTimeout(() => this.#wake(), this.#latencyMs);
    const readable = this.readable(token, now);
    if (token === undefined || token.forged || token.expiresAt <= now) {
      call.phase = "refused";
      call.refusal = grpcError(status.UNAUTHENTICATED, "The command is missing a (valid) JWT token");
      return;
    }
    if (call.parties.length === 0 || !call.parties.every((party) => readable.includes(party))) {
      call.phase = "refused";
      // Canton redacts it: the client learns no more than that it may not.
      call.refusal = grpcError(
        status.PERMISSION_DENIED,
        "An error occurred. Please contact the operator and inquire about the request <no-correlation-id> with tid <no-tid>",
      );
      return;
    }
    if (call.begin > this.end || (call.end !== undefined && call.end > this.end)) {
      call.phase = "refused";
      call.refusal = grpcError(status.FAILED_PRECONDITION, "OFFSET_AFTER_LEDGER_END");
      return;
    }
    call.phase = "accepted";
    call.readable = readable;
    // Canton ends a stream when its token expires.
    call.expiry = setTimeout(
      () => this.#fail(call, grpcError(status.ABORTED, "expired", abortedDetails("expired"))),
      token.expiresAt - now,
    );
  }

  /** Sends the call's next message, if it has one now; true when it sent one. */
  #send(call: ModelCall): boolean {
    const limit = call.end === undefined ? this.end : Math.min(call.end, this.end);
    const next = this.matching(call.parties, call.cursor, limit)[0];
    if (next !== undefined) {
      call.cursor = next.offset;
      this.#message(call, { Transaction: { value: { offset: next.offset, witnesses: next.visibleTo } } });
      call.lastOffset = next.offset;
      call.lastCheckpoint = false;
      return true;
    }
    call.cursor = Math.max(call.cursor, limit);
    if (call.end !== undefined) {
      if (call.cursor >= call.end) {
        this.#said(call);
        this.#end(call);
        call.subscriber.complete();
      }
      return false;
    }
    const end = this.end;
    const had = call.lastCheckpoint && call.lastOffset === end;
    if (!call.checkpointDue || end <= call.begin || had) return false;
    call.checkpointDue = false;
    this.#message(call, { OffsetCheckpoint: { value: { offset: end, synchronizerTimes: [] } } });
    call.lastOffset = end;
    call.lastCheckpoint = true;
    return true;
  }

  #message(call: ModelCall, update: Json): void {
    this.#said(call);
    call.subscriber.next(Buffer.from(JSON.stringify({ update }), "utf8"));
  }

  /** The call's first message: the ledger's yes reaches the gateway. */
  #said(call: ModelCall): void {
    if (call.answered) return;
    call.answered = true;
    this.stats.yes += 1;
    this.yeses.push({
      call: call.id,
      token: call.token ?? "",
      purpose: call.purpose,
      parties: call.parties,
      judgedAt: call.judgedAt ?? Date.now(),
      readable: call.readable ?? [],
    });
  }
}
