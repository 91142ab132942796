import type { LagTracker } from "./lag-tracker.js";
import type { Prepared } from "./prepare.js";
import type { SeriesRecorder } from "./recorder.js";
import {
  numberIn,
  offsetIn,
  type StreamSpec,
  type StreamSubscriber,
  stringIn,
  subscribe,
} from "./stream-subscriber.js";

/**
 * The streams a run holds open: a /v2/updates subscriber (the updates scenario, N of them), which
 * reads each transaction's lag; the /v2/commands/completions stream of submit-async, which reads
 * each async command's completion; a /v2/commands/completions subscriber (the completions-stream
 * scenario, N of them), which reads each command's completion lag. All begin at the ledger end
 * after the preparation.
 */
interface StreamDeps {
  /** The server's http(s) URL. */
  url: string;
  token: () => string;
  prepared: Prepared;
  now: () => number;
}

/** An update frame of a transaction begins `{"update":{"Transaction":`; its command id is the run's. */
const TRANSACTION = Buffer.from('"Transaction"');
const COMMAND_ID = Buffer.from('"commandId":"');

const wsUrl = (url: string, path: string) => `${url.replace(/^http/, "ws")}${path}`;

/** The query frame of a subscriber: the run party's transactions (ACS deltas) after the offset. */
const updatesRequest = (party: string, beginExclusive: number) => ({
  beginExclusive,
  updateFormat: {
    includeTransactions: {
      eventFormat: { filtersByParty: { [party]: {} }, verbose: false },
      transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
    },
  },
});

export function updatesSubscriber(
  deps: StreamDeps & { lag: LagTracker; lags: SeriesRecorder; deliveries: number },
): StreamSubscriber {
  return subscribe({
    url: wsUrl(deps.url, "/v2/updates"),
    token: deps.token,
    beginExclusive: deps.prepared.ledgerEnd,
    request: (beginExclusive) => updatesRequest(deps.prepared.party, beginExclusive),
    onElement: (frame, at) => {
      const commandId = frame.subarray(0, 40).includes(TRANSACTION) ? stringIn(frame, COMMAND_ID) : undefined;
      if (commandId !== undefined) {
        deps.deliveries++;
        const late = deps.lag.received(commandId, at);
        if (late !== undefined) deps.lags.record(late);
      }
      return offsetIn(frame);
    },
    onFault: (code) => deps.lags.error(code),
    now: deps.now,
  });
}

interface CompletionFrame {
  completionResponse?: {
    Completion?: { value: { commandId: string; status?: { code?: number } } };
  };
}

export function completionsSubscriber(
  deps: StreamDeps & { awaitingCompletion: Map<string, number>; completions: SeriesRecorder },
): StreamSubscriber {
  const { awaitingCompletion, completions } = deps;
  return completionsOfTheRun(deps, {
    onElement: (frame, at) => {
      const completion = (JSON.parse(frame.toString("utf8")) as CompletionFrame).completionResponse
        ?.Completion?.value;
      const sentAt = completion && awaitingCompletion.get(completion.commandId);
      if (completion && sentAt !== undefined) {
        awaitingCompletion.delete(completion.commandId);
        const code = completion.status?.code ?? 0;
        if (code === 0) completions.record(at - sentAt);
        else completions.error(`completion status ${code}`);
      }
      return offsetIn(frame);
    },
    onFault: (code) => completions.error(code),
  });
}

const COMPLETION = Buffer.from('"Completion"');
const STATUS_CODE = Buffer.from('"status":{"code":');

/**
 * One subscriber of the completions-stream scenario: every command of the run (whichever request
 * scenario sent it) completes on it, and its lag is the time from the command's intended send time
 * to its completion here; a completion with a status other than OK is counted under its code.
 * Read from the bytes, as the update subscribers' frames are.
 */
export function completionLagSubscriber(
  deps: StreamDeps & { lag: LagTracker; lags: SeriesRecorder },
): StreamSubscriber {
  return completionsOfTheRun(deps, {
    onElement: (frame, at) => {
      const commandId = frame.subarray(0, 40).includes(COMPLETION) ? stringIn(frame, COMMAND_ID) : undefined;
      if (commandId !== undefined) {
        const late = deps.lag.received(commandId, at);
        const code = numberIn(frame, STATUS_CODE) ?? 0;
        if (late !== undefined) {
          if (code === 0) deps.lags.record(late);
          else deps.lags.error(`completion status ${code}`);
        }
      }
      return offsetIn(frame);
    },
    onFault: (code) => deps.lags.error(code),
  });
}

/** WebSocket /v2/commands/completions of the run's user and party, from the ledger end at its start. */
function completionsOfTheRun(
  deps: StreamDeps,
  handlers: Pick<StreamSpec, "onElement" | "onFault">,
): StreamSubscriber {
  const { prepared } = deps;
  return subscribe({
    url: wsUrl(deps.url, "/v2/commands/completions"),
    token: deps.token,
    beginExclusive: prepared.ledgerEnd,
    request: (beginExclusive) => ({ userId: prepared.userId, parties: [prepared.party], beginExclusive }),
    ...handlers,
    now: deps.now,
  });
}
