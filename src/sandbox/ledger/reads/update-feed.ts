import type { OffsetCheckpoint } from "../../../proto/ledger-api-types.js";
import type { StreamSink } from "../../grpc-handler.js";
import { timestamp } from "../../protocol-values.js";
import type { LedgerUpdate, SandboxStore } from "../sandbox-store.js";

export interface FeedOptions {
  readonly store: SandboxStore;
  readonly sink: StreamSink;
  readonly beginExclusive: number;
  /** Bounded stream: stops after this offset. Open-ended (live tail) when undefined. */
  readonly endInclusive: number | undefined;
  /** The message for an update, or undefined when the reader sees nothing of it. */
  render(update: LedgerUpdate): unknown;
  /** Open-ended streams: an OffsetCheckpoint after this much idle time at the ledger end. */
  readonly checkpointIntervalMs: number;
  checkpoint?(offset: number, synchronizerId: string): unknown;
}

/**
 * Streams the store's updates in offset order into a gRPC server stream: everything after
 * `beginExclusive` (up to `endInclusive` when bounded), then, open-ended, every new update as it
 * is appended, with an OffsetCheckpoint each `checkpointIntervalMs` while there is nothing new.
 * Writes respect backpressure; cancellation stops the loop at once.
 */
export async function streamUpdates(options: FeedOptions): Promise<void> {
  const { store, sink, endInclusive } = options;
  let index = store.indexAfter(options.beginExclusive);
  let position = options.beginExclusive;
  while (!sink.cancelled) {
    const updates = store.updates;
    while (index < updates.length) {
      const update = updates[index]!;
      if (endInclusive !== undefined && update.offset > endInclusive) return;
      index++;
      position = update.offset;
      const message = options.render(update);
      if (message !== undefined) {
        const drained = sink.write(message);
        if (drained !== undefined) await drained;
        if (sink.cancelled) return;
      }
    }
    if (endInclusive !== undefined && position >= endInclusive) return;
    const woken = await nextAppend(store, options.checkpointIntervalMs, sink.whenCancelled);
    if (woken === "idle" && options.checkpoint !== undefined && position > 0 && !sink.cancelled) {
      const synchronizerId = store.synchronizers[0]!.id;
      const drained = sink.write(options.checkpoint(position, synchronizerId));
      if (drained !== undefined) await drained;
    }
  }
}

/** Streams the updates in (beginExclusive, endInclusive] from the newest to the oldest. */
export async function streamUpdatesDescending(
  options: Omit<FeedOptions, "endInclusive" | "checkpoint" | "checkpointIntervalMs"> & {
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

export function checkpointMessage(offset: number, synchronizerId: string): OffsetCheckpoint {
  return { offset, synchronizerTimes: [{ synchronizerId, recordTime: timestamp(new Date()) }] };
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
