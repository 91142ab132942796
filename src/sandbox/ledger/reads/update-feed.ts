import type { OffsetCheckpoint } from "../../../proto/ledger-api-types.js";
import type { StreamSink } from "../../grpc-handler.js";
import { timestamp } from "../../protocol-values.js";
import type { LedgerUpdate, SandboxStore } from "../sandbox-store.js";

/**
 * Canton's `ledger-api.index-service.idle-stream-offset-checkpoint-timeout` (IndexServiceConfig:
 * one minute): how long a tailing stream goes without a ledger update before it looks for a
 * checkpoint to send.
 */
export const IDLE_STREAM_OFFSET_CHECKPOINT_TIMEOUT_MS = 60_000;

/**
 * Canton also looks once, half a second after a tailing stream starts (IndexServiceImpl's
 * checkpointFlow), so a client that opens a stream at the ledger end learns at once that it is
 * caught up instead of after the idle timeout.
 */
const FIRST_CHECKPOINT_LOOK_MS = 500;

export interface FeedOptions {
  readonly store: SandboxStore;
  readonly sink: StreamSink;
  readonly beginExclusive: number;
  /** Bounded stream: stops after this offset. Open-ended (live tail) when undefined. */
  readonly endInclusive: number | undefined;
  /** The message for an update, or undefined when the reader sees nothing of it. */
  render(update: LedgerUpdate): unknown;
  /** Tailing streams: idle time before an OffsetCheckpoint is considered (Canton: one minute). */
  readonly idleCheckpointTimeoutMs: number;
  checkpoint?(offset: number, synchronizerIds: readonly string[]): unknown;
  /**
   * The error of a stream that has not read past an offset pruned meanwhile (Canton checks the
   * pruning offset after each query range): `from` is the first offset it still needs.
   */
  prunedError?(from: number, to: number, prunedUpToInclusive: number): Error;
}

/**
 * Streams the store's updates in offset order into a gRPC server stream: everything after
 * `beginExclusive` (up to `endInclusive` when bounded), then, open-ended, every new update as it
 * is appended. Writes respect backpressure; cancellation stops the loop at once.
 *
 * A tailing stream that has caught up gets an OffsetCheckpoint at the ledger end as Canton's
 * index service sends one: when it looks (once after half a second, then after each idle
 * timeout without a ledger update), and only for an offset past the last checkpoint this stream
 * sent, so an idle ledger sends one checkpoint, not one per timeout. The sandbox's checkpoint
 * is always at the ledger end: Canton's lags behind by up to its 15 s cache update interval, and
 * also lands between elements of a busy stream, which the sandbox leaves out.
 */
export async function streamUpdates(options: FeedOptions): Promise<void> {
  const { store, sink, endInclusive } = options;
  let index = store.indexAfter(options.beginExclusive);
  let position = options.beginExclusive;
  let lastCheckpoint: number | undefined;
  let firstLookAt: number | undefined = Date.now() + FIRST_CHECKPOINT_LOOK_MS;
  let lastUpdateAt = Date.now();
  while (!sink.cancelled) {
    const updates = store.updates;
    while (index < updates.length) {
      const update = updates[index]!;
      if (endInclusive !== undefined && update.offset > endInclusive) return;
      const pruned = store.latestPrunedOffset();
      if (options.prunedError !== undefined && update.offset <= pruned) {
        throw options.prunedError(position + 1, endInclusive ?? store.ledgerEnd(), pruned);
      }
      index++;
      position = update.offset;
      lastUpdateAt = Date.now();
      const message = options.render(update);
      if (message !== undefined) {
        const drained = sink.write(message);
        if (drained !== undefined) await drained;
        if (sink.cancelled) return;
      }
    }
    if (endInclusive !== undefined && position >= endInclusive) return;
    const now = Date.now();
    // A first look that fell due while the stream was still catching up finds it mid-range.
    if (firstLookAt !== undefined && firstLookAt < now) firstLookAt = undefined;
    const idleAt = lastUpdateAt + options.idleCheckpointTimeoutMs;
    const lookAt = Math.min(firstLookAt ?? idleAt, idleAt);
    const woken = await nextAppend(store, Math.max(0, lookAt - now), sink.whenCancelled);
    if (woken === "append" || sink.cancelled) continue;
    if (lookAt === firstLookAt) firstLookAt = undefined;
    else lastUpdateAt = Date.now();
    const due = options.checkpoint !== undefined && position > 0 && (lastCheckpoint ?? -1) < position;
    if (due) {
      lastCheckpoint = position;
      const drained = sink.write(options.checkpoint!(position, store.synchronizerIds));
      if (drained !== undefined) await drained;
    }
  }
}

/** Streams the updates in (beginExclusive, endInclusive] from the newest to the oldest. */
export async function streamUpdatesDescending(
  options: Omit<FeedOptions, "endInclusive" | "checkpoint" | "idleCheckpointTimeoutMs"> & {
    endInclusive: number;
  },
): Promise<void> {
  const { store, sink } = options;
  for (let index = store.indexAfter(options.endInclusive) - 1; index >= 0; index--) {
    const update = store.updates[index]!;
    if (update.offset <= options.beginExclusive || sink.cancelled) return;
    const message = options.render(update);
    if (message !== undefined) {
      const drained = sink.write(message);
      if (drained !== undefined) await drained;
    }
  }
}

/** A checkpoint with the time of each connected synchronizer at `offset` (the sandbox's clock). */
export function checkpointMessage(offset: number, synchronizerIds: readonly string[]): OffsetCheckpoint {
  const recordTime = timestamp(new Date());
  return {
    offset,
    synchronizerTimes: synchronizerIds.map((synchronizerId) => ({ synchronizerId, recordTime })),
  };
}

function nextAppend(
  store: SandboxStore,
  idleMs: number,
  cancelled: Promise<void>,
): Promise<"append" | "idle"> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (how: "append" | "idle") => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      resolve(how);
    };
    const timer = setTimeout(() => finish("idle"), idleMs);
    const unsubscribe = store.onAppend(() => finish("append"));
    void cancelled.then(() => finish("append"));
  });
}
