import { defer, finalize, Subject, takeUntil, tap } from "rxjs";
import type { GatewayTokenRefusal } from "../auth/gateway-auth.js";
import { operationId } from "../endpoints/operation-id.js";
import { tokenRenewed } from "../endpoints/renewal-ack.js";
import { RenewalIntake } from "../endpoints/renewal-intake.js";
import type { Answer, RequestContext, Route } from "../endpoints/route.js";
import type { StreamEndpoint } from "../endpoints/stream-endpoint.js";
import {
  invalidStreamTicketError,
  missingTokenError,
  quotaExceededError,
  renewalNotSupportedError,
  ticketStreamNotOpenError,
  tooManyStreamTicketsError,
} from "../errors/index.js";
import { decodeTokenClaims } from "../jwt/bearer-token.js";
import type { HeldTokens } from "../jwt/held-tokens.js";
import type { ClientQuotas } from "../limits/client-quotas.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import { type ListTwinConfig, startAfter, streamedAnswer, tagOf } from "./list-twin.js";
import type { StreamTickets, TicketStream } from "./stream-tickets.js";
import type { RenewalOutcome, TicketExchange, TicketHolder } from "./ticket-exchange.js";
import { TicketRenewals } from "./ticket-renewals.js";

export interface TicketRoutesOptions {
  readonly tickets: StreamTickets;
  /** Unused tickets a user may hold (the limit StreamTickets was made with), for the refusal. */
  readonly pendingPerUser: number;
  readonly config: ListTwinConfig;
  /** The worker's held tokens: a ticket's stream holds its token while it reads (see HeldTokens). */
  readonly tokens?: HeldTokens;
  /**
   * The largest ticket request body (websocket-config.max-query-frame-bytes: a ticket stands for
   * a stream's query, and the gateway keeps it while the ticket lives: a user's unused tickets
   * hold at most this many bytes each).
   */
  readonly maxRequestBytes: number;
  /** websocket-config.token-renewals-per-minute: a ticket's stream renews at the rate a socket does. */
  readonly renewalsPerMinute: number;
  /** The gateway's own token check (auth.mode), which renewed tokens pass as at the upgrade. */
  readonly tokenRefusal?: GatewayTokenRefusal;
  /** Caps per user: a ticket's stream is one of its user's streams while it is read. */
  readonly quotas?: ClientQuotas;
  readonly metrics?: GatewayMetrics;
  /** The other worker threads' tickets (server.workers > 1); absent: this gateway holds them all. */
  readonly exchange?: TicketExchange;
}

/** Where a ticket's stream is renewed: one path for every stream endpoint (the ticket says which). */
const TICKET_RENEWAL_PATH = "/v2/stream-tickets/renewal";

/**
 * The GET form of each stream endpoint, for a browser's `EventSource` (which sends no header):
 * `POST <path>/stream-ticket` with the stream's request and the bearer token answers a ticket;
 * `GET <path>?ticket=...` reads the stream as server-sent events on that token, through the same
 * reader as the list twins' streamed answers (readerElements: one gate per subscriber); `POST
 * /v2/stream-tickets/renewal` with a newer token of the same user and the ticket renews it,
 * answered with the new expiry. stream-tickets.ts says what a ticket binds and how a reconnect
 * resumes; docs/security.md, "Stream tickets", why.
 */
export function streamTicketRoutes(
  endpoints: readonly StreamEndpoint[],
  options: TicketRoutesOptions,
): Route[] {
  return [
    ...endpoints.flatMap((endpoint) => [
      ticketRoute(endpoint, options),
      ticketStreamRoute(endpoint, options),
    ]),
    renewalRoute(options),
  ];
}

function ticketRoute(endpoint: StreamEndpoint, options: TicketRoutesOptions): Route {
  const path = `${endpoint.path}/stream-ticket`;
  return {
    method: "POST",
    path,
    operationId: operationId("POST", path),
    summary: `A ticket that opens ${endpoint.path} as server-sent events with GET (for a browser's EventSource)`,
    tag: tagOf(endpoint.path),
    body: { kind: "json", schema: endpoint.requestSchema, maxBytes: options.maxRequestBytes },
    response: { kind: "json", schema: "StreamTicket" },
    auth: "token",
    headers: ["origin"],
    ...(endpoint.deprecated ? { deprecated: true } : {}),
    ...(endpoint.availability ? { availability: endpoint.availability } : {}),
    handle: async (ctx): Promise<Answer> => {
      const token = ctx.token;
      if (token === undefined) throw missingTokenError();
      // The ledger's word on the token before a ticket stands for it: a page reads a refusal's
      // status here, where an EventSource would only fail.
      await endpoint.admit?.(token, ctx.trace);
      const asked = { path: endpoint.path, request: ctx.body, origin: ctx.headers.origin ?? "" };
      const issued = options.tickets.issue(asked, token);
      if (issued === undefined) throw tooManyStreamTicketsError(options.pendingPerUser);
      return {
        kind: "json",
        body: { ticket: issued.ticket, expiresAt: new Date(issued.expiresAt).toISOString() },
      };
    },
  };
}

function ticketStreamRoute(endpoint: StreamEndpoint, options: TicketRoutesOptions): Route {
  return {
    method: "GET",
    path: endpoint.path,
    operationId: operationId("GET", endpoint.path),
    summary: `${endpoint.summary} (server-sent events, opened with a stream ticket: for a browser's EventSource)`,
    tag: tagOf(endpoint.path),
    query: [{ name: "ticket", type: "string", required: true }],
    response: { kind: "text", contentType: "text/event-stream" },
    // The ticket is the credential: the token it stands for was judged when it was issued, and
    // the stream's own ledger call on that token is judged again, behind the gate.
    auth: "none",
    headers: ["origin", "last-event-id"],
    ...(endpoint.deprecated ? { deprecated: true } : {}),
    ...(endpoint.availability ? { availability: endpoint.availability } : {}),
    handle: async (ctx): Promise<Answer> => {
      const ticket = typeof ctx.query.ticket === "string" ? ctx.query.ticket : "";
      const shown = {
        path: endpoint.path,
        origin: ctx.headers.origin ?? "",
        lastEventId: ctx.headers["last-event-id"] ?? "",
      };
      const open = () => options.tickets.open(ticket, shown);
      let opening = open();
      if (opening.kind === "unknown" && options.exchange !== undefined) {
        const moved = await options.exchange.take(ticket, shown);
        if (moved !== undefined) {
          options.tickets.adopt(moved);
          opening = open();
        }
      }
      if (opening.kind === "refused" || opening.kind === "unknown") throw invalidStreamTicketError();
      // An ended stream's reconnect: 204 is what tells an EventSource to stop reconnecting.
      if (opening.kind === "ended") return { kind: "empty", status: 204 };
      return ticketStream(endpoint, opening.stream, opening.after, ctx, options);
    },
  };
}

/** A ticket's stream read by this connection until it ends, the client leaves, or a reconnect takes it over. */
function ticketStream(
  endpoint: StreamEndpoint,
  stream: TicketStream,
  after: string | undefined,
  ctx: RequestContext,
  options: TicketRoutesOptions,
): Answer {
  const { tickets } = options;
  const request =
    after === undefined ? stream.asked.request : startAfter(endpoint, stream.asked.request, after);
  const hold = options.quotas?.hold([
    { cap: "streams-per-user", who: decodeTokenClaims(stream.token)?.subject },
  ]);
  if (hold?.refusal !== undefined) throw quotaExceededError(hold.refusal);
  ctx.signal.addEventListener("abort", () => hold?.release(), { once: true });
  stream.intake ??= new RenewalIntake({
    ...(options.tokenRefusal ? { tokenRefusal: options.tokenRefusal } : {}),
    where: `GET ${endpoint.path} token renewal`,
    perMinute: options.renewalsPerMinute,
    upgradeToken: stream.token,
  });
  const renewals = new TicketRenewals(stream.intake, (token) => tickets.renewed(stream, token));
  const taken$ = new Subject<void>();
  const key = stream.resumeKey;
  const answer = streamedAnswer(
    endpoint,
    ctx,
    "sse",
    {
      limit: undefined,
      wait: undefined,
      config: options.config,
      metrics: options.metrics,
      tokens: options.tokens,
    },
    {
      request,
      token: stream.token,
      ...(endpoint.renewable ? { renewals: renewals.gate } : {}),
      idOf: (element) => {
        const id = endpoint.offsetOf?.(element);
        return id === undefined ? undefined : `${key}.${id}`;
      },
    },
  );
  return {
    ...answer,
    elements: (demand$) =>
      defer(() => {
        let completed = false;
        const detach = tickets.attach(stream, {
          stop: () => taken$.next(),
          renew: (token) =>
            endpoint.renewable
              ? renewals.renew(token)
              : Promise.resolve(renewalNotSupportedError(endpoint.path)),
        });
        return answer.elements(demand$).pipe(
          tap({ complete: () => (completed = true) }),
          takeUntil(taken$),
          finalize(() => {
            detach(completed);
            renewals.close();
            hold?.release();
          }),
        );
      }),
  };
}

function renewalRoute(options: TicketRoutesOptions): Route {
  return {
    method: "POST",
    path: TICKET_RENEWAL_PATH,
    operationId: operationId("POST", TICKET_RENEWAL_PATH),
    summary:
      "Renews the token of a ticket's stream (server-sent events) with the bearer token, a newer one of the same user",
    tag: "Updates",
    body: { kind: "json", schema: "StreamTicketRenewal" },
    response: { kind: "json", schema: "TokenRenewed" },
    auth: "token",
    handle: async (ctx): Promise<Answer> => {
      const token = ctx.token;
      if (token === undefined) throw missingTokenError();
      const { ticket } = ctx.body as { ticket: string };
      const outcome =
        (await renewedHere(options.tickets, ticket, token)) ?? (await options.exchange?.renew(ticket, token));
      if (outcome === undefined) throw invalidStreamTicketError();
      if (outcome.refusal !== undefined) throw outcome.refusal;
      return { kind: "json", body: tokenRenewed(token) };
    },
  };
}

/** `token` put to the stream of `ticket` if this gateway holds it; undefined when it does not. */
function renewedHere(
  tickets: StreamTickets,
  ticket: string,
  token: string,
): Promise<RenewalOutcome> | undefined {
  const stream = tickets.opened(ticket);
  if (stream === undefined) return undefined;
  const reader = stream.live;
  if (reader === undefined) return Promise.resolve({ refusal: ticketStreamNotOpenError() });
  return reader.renew(token).then((refusal) => (refusal === undefined ? {} : { refusal }));
}

/** What this gateway's tickets answer other worker threads (ticket-exchange.ts). */
export function ticketHolder(tickets: StreamTickets): TicketHolder {
  return {
    take: (ticket, shown) => tickets.take(ticket, shown),
    renew: (ticket, token) => renewedHere(tickets, ticket, token),
  };
}
