import { BroadcastChannel } from "node:worker_threads";
import { CantonHttpError, errorAnswer, invalidArgumentError } from "../errors/index.js";
import type { MovedTicket, TicketShown } from "./stream-tickets.js";

/**
 * Stream tickets across worker threads (server.workers > 1). Each worker keeps the tickets it
 * issued and the streams it reads; the kernel spreads connections over the workers, so a ticket's
 * GET, a reconnect or a renewal may reach a worker that does not hold it. That worker asks the
 * others on a channel of the gateway's own (one per port, in this process only): the holder of a
 * ticket hands it over to be opened there (stopping a connection that still reads it, as a local
 * reconnect would), and a renewal is put to the stream where a connection reads it, its outcome
 * sent back. Tokens cross threads of the one process, never a socket or a log. No answer within
 * `answerWithinMs` is no ticket: the request is refused (401), never served on a guess.
 */
export interface TicketHolder {
  /**
   * Hands over the ticket `ticket` (forgotten here) for a GET showing `shown`, or undefined when
   * it is not here or that GET would not open it.
   */
  take(ticket: string, shown: TicketShown): MovedTicket | undefined;
  /** Puts `token` to the stream of `ticket` if it is read here: undefined when it is not. */
  renew(ticket: string, token: string): Promise<RenewalOutcome> | undefined;
}

/** A renewal's outcome where its stream was: accepted (no refusal), or the refusal. */
export interface RenewalOutcome {
  readonly refusal?: unknown;
}

type Message =
  | {
      readonly kind: "take";
      readonly id: number;
      readonly from: number;
      readonly ticket: string;
      readonly shown: TicketShown;
    }
  | { readonly kind: "taken"; readonly id: number; readonly to: number; readonly moved?: MovedTicket }
  | {
      readonly kind: "renew";
      readonly id: number;
      readonly from: number;
      readonly ticket: string;
      readonly token: string;
    }
  | {
      readonly kind: "renewed";
      readonly id: number;
      readonly to: number;
      readonly found: boolean;
      readonly refusal?: SentError;
    };

/** A refusal as it crosses threads: what errorAnswer makes of it. */
type SentError = { readonly status: number; readonly body?: CantonHttpError["body"]; readonly text?: string };

interface Asking {
  left: number;
  readonly answered: (message: Message) => boolean;
  readonly done: () => void;
}

export class TicketExchange {
  readonly #channel: BroadcastChannel;
  readonly #self: number;
  readonly #peers: number;
  readonly #answerWithinMs: number;
  readonly #asking = new Map<number, Asking>();
  #nextId = 0;

  constructor(
    name: string,
    /** This worker's number, and how many other workers there are. */
    self: number,
    peers: number,
    holder: TicketHolder,
    answerWithinMs = 2_000,
  ) {
    this.#self = self;
    this.#peers = peers;
    this.#answerWithinMs = answerWithinMs;
    this.#channel = new BroadcastChannel(name);
    // A channel keeps no thread alive on its own: the gateway's sockets do.
    this.#channel.unref();
    this.#channel.onmessage = (event) => void this.#received((event as { data: Message }).data, holder);
  }

  /** The ticket from whichever worker holds it, or undefined when none answers that it does. */
  take(ticket: string, shown: TicketShown): Promise<MovedTicket | undefined> {
    let moved: MovedTicket | undefined;
    return this.#ask({ kind: "take", ticket, shown }, (message) => {
      if (message.kind !== "taken" || message.moved === undefined) return false;
      moved = message.moved;
      return true;
    }).then(() => moved);
  }

  /** The renewal put to the worker that reads the ticket's stream; undefined: no worker does. */
  renew(ticket: string, token: string): Promise<RenewalOutcome | undefined> {
    let outcome: RenewalOutcome | undefined;
    return this.#ask({ kind: "renew", ticket, token }, (message) => {
      if (message.kind !== "renewed" || !message.found) return false;
      outcome = message.refusal === undefined ? {} : { refusal: receivedError(message.refusal) };
      return true;
    }).then(() => outcome);
  }

  close(): void {
    this.#channel.close();
    for (const asking of this.#asking.values()) asking.done();
  }

  /** Sends a question to every other worker; resolves at the first that answers it, or when all said no. */
  #ask(
    question:
      | { kind: "take"; ticket: string; shown: TicketShown }
      | { kind: "renew"; ticket: string; token: string },
    answered: (message: Message) => boolean,
  ): Promise<void> {
    const id = this.#nextId++;
    if (this.#peers <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), this.#answerWithinMs);
      const done = () => {
        clearTimeout(timer);
        this.#asking.delete(id);
        resolve();
      };
      this.#asking.set(id, { left: this.#peers, answered, done });
      this.#channel.postMessage({ ...question, id, from: this.#self });
    });
  }

  async #received(message: Message, holder: TicketHolder): Promise<void> {
    switch (message.kind) {
      case "take": {
        const moved = holder.take(message.ticket, message.shown);
        this.#channel.postMessage({
          kind: "taken",
          id: message.id,
          to: message.from,
          ...(moved ? { moved } : {}),
        });
        return;
      }
      case "renew": {
        const outcome = await holder.renew(message.ticket, message.token);
        this.#channel.postMessage({
          kind: "renewed",
          id: message.id,
          to: message.from,
          found: outcome !== undefined,
          ...(outcome?.refusal === undefined ? {} : { refusal: sentError(outcome.refusal) }),
        });
        return;
      }
      default: {
        if (message.to !== this.#self) return;
        const asking = this.#asking.get(message.id);
        if (asking === undefined) return;
        asking.left -= 1;
        if (asking.answered(message) || asking.left <= 0) asking.done();
      }
    }
  }
}

function sentError(error: unknown): SentError {
  const answer = errorAnswer(error);
  return answer.kind === "json"
    ? { status: answer.status, body: answer.body }
    : { status: answer.status, text: answer.text };
}

function receivedError(sent: SentError): unknown {
  if (sent.body !== undefined) return new CantonHttpError(sent.status, sent.body);
  return invalidArgumentError(sent.text ?? "refused");
}
