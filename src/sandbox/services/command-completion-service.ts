import type {
  Completion,
  CompletionStreamRequest__Output,
  GetCompletionByHashRequest__Output,
  GetCompletionByHashResponse,
  GetCompletionsRequest__Output,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation, StreamSink } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { completionOf } from "../ledger/reads/completion-renderer.js";
import { checkpointMessage, streamUpdates } from "../ledger/reads/update-feed.js";
import { SandboxError } from "../sandbox-error.js";
import { checkStartOffset } from "./start-offset.js";

/**
 * CommandCompletionService: the completions of commands from `beginExclusive` on, live, with
 * OffsetCheckpoints while idle.
 * - CompletionStream: one user's commands for the requested parties; the user is the token's own
 *   unless the token may read as any party.
 * - GetCompletions (Canton 3.5.10 on): every user's commands for the requested parties, or for
 *   all parties when none are named, which only a reader of any party may ask.
 * - GetCompletionByHash (Canton 3.6 on): the completions of a prepared transaction's executions
 *   by the hash its parties signed, those with an actAs party the caller may read as: the
 *   acceptance, if any, and the last rejections, newest first.
 */
export function commandCompletionService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.CommandCompletionService",
    unary: {
      GetCompletionByHash: async (
        request: GetCompletionByHashRequest__Output,
        context: CallContext,
      ): Promise<GetCompletionByHashResponse> => {
        // Canton's MatchReadAsParties first: a caller that reads as no party at all is refused.
        await context.authorize({ kind: "some-readable-party" });
        const hash = Buffer.from(request.transactionHash);
        if (hash.length === 0) throw errors.invalidArgument("Missing field: transaction_hash");
        const pruned = runtime.ledger.store.latestPrunedOffset();
        let accepted: Completion | undefined;
        const rejected: Completion[] = [];
        for (const update of runtime.ledger.updatesByTransactionHash(hash)) {
          if (update.offset <= pruned || update.kind === "topology" || update.completion === undefined)
            continue;
          if (!(await readsAsAnyOf(context, update.completion.actAs))) continue;
          const completion = completionOf(update, undefined, undefined);
          if (completion === undefined) continue;
          if (update.kind === "rejection") rejected.unshift(completion);
          else accepted = completion;
        }
        if (accepted === undefined && rejected.length === 0)
          throw ledgerErrors.completionNotFound(hash.toString("hex"));
        return {
          ...(accepted === undefined ? {} : { acceptedCompletion: accepted }),
          lastRejectedCompletions: rejected.slice(0, MAX_REJECTED_COMPLETIONS_BY_HASH),
        };
      },
    },
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

/** Canton's `index-service.max-rejected-completions-by-hash` default. */
const MAX_REJECTED_COMPLETIONS_BY_HASH = 10;

/**
 * Whether the caller may read as one of `parties` (Canton's MatchReadAsParties narrows the lookup
 * to the parties the caller reads as, or none for a reader of any party). The authorizer is asked
 * party by party; only its refusal means "not visible", any other failure is the call's.
 */
async function readsAsAnyOf(context: CallContext, parties: readonly string[]): Promise<boolean> {
  for (const party of parties) {
    try {
      await context.authorize({ kind: "read-as", parties: [party] });
      return true;
    } catch (error) {
      if (!(error instanceof SandboxError && error.code.id === "PERMISSION_DENIED")) throw error;
    }
  }
  return false;
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
