import { ModelRegistry } from "../models/model-registry.js";
import { ParticipantLedger } from "./participant-ledger.js";
import { EventRenderer } from "./reads/event-renderer.js";
import { IDLE_STREAM_OFFSET_CHECKPOINT_TIMEOUT_MS } from "./reads/update-feed.js";
import type { SandboxStore } from "./sandbox-store.js";

export interface LedgerRuntimeOptions {
  /** Idle time before a tailing stream looks for an OffsetCheckpoint; Canton's default, 60 s. */
  readonly idleStreamOffsetCheckpointTimeoutMs?: number;
  /** The HMAC key of created event blobs; random per sandbox unless given. */
  readonly blobSecret?: Buffer;
}

/** What the ledger services share: the ledger, its event renderer and stream settings. */
export interface LedgerRuntime {
  readonly ledger: ParticipantLedger;
  readonly events: EventRenderer;
  readonly registry: ModelRegistry;
  readonly idleStreamOffsetCheckpointTimeoutMs: number;
  readonly participantName: string;
}

export function createLedgerRuntime(store: SandboxStore, options: LedgerRuntimeOptions = {}): LedgerRuntime {
  const registry = new ModelRegistry();
  const ledger = new ParticipantLedger(store, registry, options.blobSecret);
  return {
    ledger,
    events: new EventRenderer(ledger),
    registry,
    idleStreamOffsetCheckpointTimeoutMs:
      options.idleStreamOffsetCheckpointTimeoutMs ?? IDLE_STREAM_OFFSET_CHECKPOINT_TIMEOUT_MS,
    participantName: store.participant.name,
  };
}
