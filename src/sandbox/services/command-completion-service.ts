import type {
  CompletionStreamRequest__Output,
  GetCompletionsRequest__Output,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation, StreamSink } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { completionOf } from "../ledger/reads/completion-renderer.js";
import { checkpointMessage, streamUpdates } from "../ledger/reads/update-feed.js";
import { checkStartOffset } from "./start-offset.js";

/**
 * CommandCompletionService: the completions of commands from `beginExclusive` on, live, with
 * OffsetCheckpoints while idle.
 * - CompletionStream: one user's commands for the requested parties; the user is the token's own
 *   unless the token may read as any party.
 * - GetCompletions (Canton 3.5.10 on): every user's commands for the requested parties, or for
 *   all parties when none are named, which only a reader of any party may ask.
 */
export function commandCompletionService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.CommandCompletionService",
    unary: {},
    stream: {
      CompletionStream: async (
        request: CompletionStreamRequest__Output,
        context: CallContext,
        sink: StreamSink,
      ) => {
        // Canton's completionStreamClaims: another user's completions only for a reader of any party.
        await context.authorize({ kind: "own-user-id", userId: request.userId, unlessReadsAsAnyParty: true });
        await context.authorize({ kind: "read-as", parties: request.parties });
        const userId = request.userId !== "" ? request.userId : (context.caller.userId ?? "");
        if (userId === "") throw errors.missingField("user_id");
        if (request.parties.length === 0) throw errors.missingField("parties");
        await streamCompletions(
          runtime,
          sink,
          Number(request.beginExclusive),
          userId,
          new Set(request.parties),
        );
      },
      GetCompletions: async (
        request: GetCompletionsRequest__Output,
        context: CallContext,
        sink: StreamSink,
      ) => {
        // Canton's getCompletionsClaims: readAs of every named party, or any party when none is named.
        await context.authorize(
          request.parties.length === 0
            ? { kind: "read-as-any-party" }
            : { kind: "read-as", parties: request.parties },
        );
        const parties = request.parties.length === 0 ? undefined : new Set(request.parties);
        await streamCompletions(runtime, sink, Number(request.beginExclusive), undefined, parties);
      },
    },
  };
}

function streamCompletions(
  runtime: LedgerRuntime,
  sink: StreamSink,
  begin: number,
  userId: string | undefined,
  parties: ReadonlySet<string> | undefined,
): Promise<void> {
  const store = runtime.ledger.store;
  checkStartOffset(store, begin, {
    field: "begin_exclusive",
    kind: "Begin",
    prunedCause: (pruned, ledgerEnd) =>
      `Command completions request from ${begin + 1} to ${ledgerEnd} overlaps with pruned offset ${pruned}`,
  });
  return streamUpdates({
    store,
    sink,
    beginExclusive: begin,
    endInclusive: undefined,
    idleCheckpointTimeoutMs: runtime.idleStreamOffsetCheckpointTimeoutMs,
    prunedError: (from, to, prunedUpTo) =>
      ledgerErrors.participantPrunedDataAccessed(
        `Command completions request from ${from} to ${to} overlaps with pruned offset ${prunedUpTo}`,
        prunedUpTo,
      ),
    render: (update) => {
      const completion = completionOf(update, userId, parties);
      return completion === undefined ? undefined : { completion };
    },
    checkpoint: (offset, synchronizerIds) => ({
      offsetCheckpoint: checkpointMessage(offset, synchronizerIds),
    }),
  });
}
