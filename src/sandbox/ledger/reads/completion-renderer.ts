import type { Completion } from "../../../proto/ledger-api-types.js";
import { OK_STATUS, timestamp } from "../../protocol-values.js";
import type { CompletionInfo } from "../ledger-records.js";
import type { LedgerUpdate } from "../sandbox-store.js";

/**
 * The completion of the command behind `update` for a completion stream reader, or undefined
 * when the update has none or the reader may not see it (another user id, or no actAs party
 * among the requested parties). actAs is narrowed to the requested parties, as Canton does.
 * Without a user id every user's completions are read, without parties every party's (GetCompletions).
 */
export function completionOf(
  update: LedgerUpdate,
  userId: string | undefined,
  parties: ReadonlySet<string> | undefined,
): Completion | undefined {
  if (update.kind === "topology" || update.completion === undefined) return undefined;
  const info = update.completion;
  if (userId !== undefined && info.userId !== userId) return undefined;
  const actAs = parties === undefined ? [...info.actAs] : info.actAs.filter((p) => parties.has(p));
  if (actAs.length === 0) return undefined;
  return {
    commandId: info.commandId,
    status: update.kind === "rejection" ? update.status : OK_STATUS,
    updateId: update.kind === "rejection" ? "" : update.updateId,
    userId: info.userId,
    actAs,
    submissionId: info.submissionId,
    ...deduplicationOf(info),
    traceContext: null,
    offset: update.offset,
    synchronizerTime: { synchronizerId: update.synchronizerId, recordTime: timestamp(update.recordTime) },
    paidTrafficCost: 0,
    ...((update.kind === "transaction" || update.kind === "rejection") && update.transactionHash !== undefined
      ? { transactionHash: update.transactionHash }
      : {}),
  };
}

function deduplicationOf(info: CompletionInfo) {
  const period = info.deduplication;
  switch (period.kind) {
    case "offset":
      return { deduplicationOffset: period.offset };
    case "duration":
      return { deduplicationDuration: { seconds: period.seconds, nanos: period.nanos } };
    case "none":
      return {};
  }
}
