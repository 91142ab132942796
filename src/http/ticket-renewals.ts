import { Subject } from "rxjs";
import type { RenewalIntake } from "../endpoints/renewal-intake.js";
import type { SubscriberStreamOptions } from "../endpoints/subscriber-stream.js";
import { ticketStreamNotOpenError } from "../errors/index.js";

type GateRenewals = NonNullable<SubscriberStreamOptions["renewals"]>;

/**
 * The renewals of one connection reading a ticket's stream (server-sent events), each answered:
 * a renewal request's token passes the stream's intake (the gateway's verifier, the stream's
 * user, its rate: the checks a WebSocket renewal frame passes), then the stream's gate asks the
 * ledger whether it may read the stream from where it stands (authorizeSubscriber, as for a
 * WebSocket). One is put to the gate at a time, so that each request learns its own outcome
 * (the gate lets a newer token replace one still waiting, which a frame needs no answer for).
 */
export class TicketRenewals {
  readonly #intake: RenewalIntake;
  readonly #accepted: (token: string) => void;
  readonly #tokens$ = new Subject<string>();
  #waiting: { readonly token: string; readonly settle: (refusal: unknown | undefined) => void } | undefined;
  #turn: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** `accepted` is told each token the ledger accepted, after the gate moved onto it. */
  constructor(intake: RenewalIntake, accepted: (token: string) => void) {
    this.#intake = intake;
    this.#accepted = accepted;
  }

  /** What the gate reads (SubscriberStreamOptions.renewals). */
  readonly gate: GateRenewals = {
    tokens$: this.#tokens$,
    renewed: (token) => {
      this.#accepted(token);
      if (this.#waiting?.token === token) this.#settle(undefined);
    },
    refused: (error) => this.#settle(error),
  };

  /** Resolves with undefined once the ledger accepted `token` for the stream, else with the refusal. */
  renew(token: string): Promise<unknown | undefined> {
    const checked = this.#intake.check(token);
    const outcome = this.#turn.then(async () => {
      const refusal = await checked;
      if (refusal !== undefined) return refusal;
      if (this.#closed) return ticketStreamNotOpenError();
      return new Promise<unknown | undefined>((settle) => {
        this.#waiting = { token, settle };
        this.#tokens$.next(token);
      });
    });
    this.#turn = outcome.catch(() => undefined);
    return outcome;
  }

  /** The connection ended: a renewal still asked of the gate is answered, and none is put to it. */
  close(): void {
    this.#closed = true;
    this.#settle(ticketStreamNotOpenError());
  }

  #settle(refusal: unknown | undefined): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.settle(refusal);
  }
}
