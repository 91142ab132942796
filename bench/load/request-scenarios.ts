import { errorCode, type JsonClient, networkErrorCode } from "./json-client.js";
import type { LagTracker } from "./lag-tracker.js";
import type { RequestScenario } from "./load-options.js";
import { createCommand, type Prepared } from "./prepare.js";
import type { ReassignmentAnswer, ReassignmentPool } from "./reassignment-pool.js";

/** How each transaction of a /v2/updates list begins. */
const TRANSACTION = '{"update":{"Transaction":';

/** A request's outcome: undefined when it succeeded, else the code it is counted under. */
export type Outcome = string | undefined;

/**
 * One request of each scenario, as a function of its sequence number and its intended send time
 * (`sentAt`, what lag is measured from): every command creates one contract of the run's party
 * with a command id under the run's prefix, registered with the lag trackers (the update
 * subscribers', the completion subscribers'; for submit-async, with the completions it waits for)
 * before it is sent.
 */
export interface ScenarioDeps {
  client: JsonClient;
  token: () => string;
  prepared: Prepared;
  lag: LagTracker;
  /** The completions-stream subscribers' lag (none registered without them). */
  completionLag: LagTracker;
  /** Async commands awaiting their completion: command id -> intended send time. */
  awaitingCompletion: Map<string, number>;
}

export function requestScenario(
  name: RequestScenario,
  deps: ScenarioDeps,
): (seq: number, sentAt: number, measured: boolean) => Promise<Outcome> {
  const { client, token, prepared, lag, completionLag } = deps;
  const send = async (method: string, path: string, body?: unknown): Promise<Outcome> => {
    try {
      const answer = await client.request(method, path, token(), body);
      return answer.status >= 200 && answer.status < 300 ? undefined : errorCode(answer);
    } catch (error) {
      return networkErrorCode(error);
    }
  };
  const command = async (
    seq: number,
    sentAt: number,
    measured: boolean,
    path: string,
    wrap: (command: unknown) => unknown,
  ): Promise<Outcome> => {
    const commandId = `${prepared.prefix}-${name}-${seq}`;
    if (measured) {
      lag.sent(commandId, sentAt);
      completionLag.sent(commandId, sentAt);
    }
    if (measured && name === "submit-async") deps.awaitingCompletion.set(commandId, sentAt);
    const outcome = await send("POST", path, wrap(createCommand(prepared, commandId, prepared.party)));
    if (outcome !== undefined) {
      lag.failed(commandId);
      completionLag.failed(commandId);
      deps.awaitingCompletion.delete(commandId);
    }
    return outcome;
  };
  switch (name) {
    case "submit-and-wait":
      return (seq, sentAt, measured) =>
        command(seq, sentAt, measured, "/v2/commands/submit-and-wait", (c) => c);
    case "submit-and-wait-for-transaction":
      return (seq, sentAt, measured) =>
        command(seq, sentAt, measured, "/v2/commands/submit-and-wait-for-transaction", (c) => ({
          commands: c,
        }));
    case "submit-async":
      return (seq, sentAt, measured) => command(seq, sentAt, measured, "/v2/commands/async/submit", (c) => c);
    case "submit-and-wait-for-reassignment": {
      const pool = prepared.reassignments as ReassignmentPool;
      const eventFormat = { filtersByParty: { [prepared.party]: {} }, verbose: false };
      return async (seq) => {
        const contract = await pool.take();
        try {
          const answer = await client.request(
            "POST",
            "/v2/commands/submit-and-wait-for-reassignment",
            token(),
            {
              reassignmentCommands: {
                commandId: `${prepared.prefix}-${name}-${seq}`,
                userId: prepared.userId,
                submitter: prepared.party,
                commands: [{ command: pool.nextCommand(contract) }],
              },
              eventFormat,
            },
          );
          if (answer.status < 200 || answer.status > 299) return errorCode(answer);
          pool.advance(contract, JSON.parse(answer.body) as ReassignmentAnswer);
          return undefined;
        } catch (error) {
          return networkErrorCode(error);
        } finally {
          pool.give(contract);
        }
      };
    }
    case "acs": {
      const body = {
        eventFormat: { filtersByParty: { [prepared.acsParty as string]: {} }, verbose: false },
        activeAtOffset: prepared.ledgerEnd,
      };
      return () => send("POST", "/v2/state/active-contracts", body);
    }
    case "updates-list": {
      // A fixed range prepared before the run (the acs party's creations): every request lists the
      // same --acs-contracts transactions, so runs and servers compare, whatever else the ledger holds.
      const range = prepared.acsRange as NonNullable<Prepared["acsRange"]>;
      const body = {
        beginExclusive: range.beginExclusive,
        endInclusive: range.endInclusive,
        updateFormat: {
          includeTransactions: {
            eventFormat: { filtersByParty: { [prepared.acsParty as string]: {} }, verbose: false },
            transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
          },
        },
      };
      const expected = range.transactions;
      return async () => {
        try {
          const answer = await client.request("POST", "/v2/updates", token(), body);
          if (answer.status < 200 || answer.status > 299) return errorCode(answer);
          // A short answer would be a fast one: counted apart, not as a latency.
          const listed = answer.body.split(TRANSACTION).length - 1;
          return listed === expected ? undefined : `updates-list: ${listed} of ${expected} transactions`;
        } catch (error) {
          return networkErrorCode(error);
        }
      };
    }
    case "reads":
      return (seq) => send("GET", seq % 2 === 0 ? "/v2/state/ledger-end" : "/v2/version");
  }
}
