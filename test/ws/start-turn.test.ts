import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { QueuedStartTurn } from "../../src/ws/start-turn.js";
import type { StartWaiter } from "../../src/ws/stream-session.js";
import type { Ticket, TurnWaiter } from "../../src/ws/upgrade-pacer.js";

/** A ticket the test settles by hand: its turn comes, or the pace refuses it. */
function handTicket() {
  const state = {
    released: undefined as TurnWaiter | undefined,
    abandoned: 0,
  };
  const ticket: Ticket = {
    release: (waiter) => {
      state.released = waiter;
    },
    abandon: () => {
      state.abandoned++;
    },
  };
  return { ticket, state };
}

const refusal = (retryAfterSeconds: number) => `paced ${retryAfterSeconds}`;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A queued turn, and its stream's wait told into `events` ("start" or "refused <error>"). */
function queuedTurn() {
  const { ticket, state } = handTicket();
  const turn = new QueuedStartTurn(ticket, refusal);
  turn.queue();
  const events: string[] = [];
  const wait = () => turn.wait(told(events));
  return { turn, state, events, wait };
}

/** A stream's wait for its turn, told into `events` ("start" or "refused <error>"). */
function told(events: string[]): StartWaiter {
  return {
    startNow: () => events.push("start"),
    startRefused: (error) => events.push(`refused ${error}`),
  };
}

describe("a socket's start turn", () => {
  it("starts at the query when the turn came first (a quiet worker's turn comes at the open)", () => {
    const { state, events, wait } = queuedTurn();
    state.released?.turnCame();
    wait();
    deepStrictEqual(events, ["start"]);
  });

  it("starts in its turn when the query came first, once", () => {
    const { state, events, wait } = queuedTurn();
    wait();
    deepStrictEqual(events, []);
    state.released?.turnCame();
    deepStrictEqual(events, ["start"]);
  });

  it("ends the stream with the pace's refusal, whether the query came before it or after", () => {
    for (const queryFirst of [true, false]) {
      const { state, events, wait } = queuedTurn();
      if (queryFirst) wait();
      state.released?.turnRefused(3);
      if (!queryFirst) wait();
      deepStrictEqual(events, ["refused paced 3"]);
    }
  });

  it("lets go of its ticket once its turn came or was refused: a crowd's sockets outlive their turns", async () => {
    for (const settle of ["came", "refused"] as const) {
      let hand: ReturnType<typeof handTicket> | undefined = handTicket();
      const ticket = new WeakRef(hand.ticket);
      const turn = new QueuedStartTurn(hand.ticket, refusal);
      turn.queue();
      if (settle === "came") hand.state.released?.turnCame();
      else hand.state.released?.turnRefused(3);
      hand = undefined;
      // The turn lives on, as its socket's does; a WeakRef holds its target until the turn of the event loop ends.
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      strictEqual(ticket.deref(), undefined, settle);
      const events: string[] = [];
      turn.wait(told(events));
      turn.giveBack();
      deepStrictEqual(events, [settle === "came" ? "start" : "refused paced 3"]);
    }
  });

  it("gives its turn back when the socket closes, and starts nothing after", () => {
    const { turn, state, events, wait } = queuedTurn();
    wait();
    turn.giveBack();
    strictEqual(state.abandoned, 1);
    // Were the ticket's turn to come regardless (it is withdrawn: see the pacer), nothing starts.
    state.released?.turnCame();
    deepStrictEqual(events, []);
  });
});
