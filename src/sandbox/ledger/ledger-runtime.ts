import { ModelRegistry } from "../models/model-registry.js";
import { ParticipantLedger } from "./participant-ledger.js";
import { EventRenderer } from "./reads/event-renderer.js";
import type { SandboxStore } from "./sandbox-store.js";

export interface LedgerRuntimeOptions {
  /** Idle time after which open-ended streams emit an OffsetCheckpoint. Default 1000 ms. */
  readonly checkpointIntervalMs?: number;
  /** The HMAC key of created event blobs; random per sandbox unless given. */
  readonly blobSecret?: Buffer;
}

/** What the ledger services share: the ledger, its event renderer and stream settings. */
export interface LedgerRuntime {
  readonly ledger: ParticipantLedger;
  readonly events: EventRenderer;
  readonly registry: ModelRegistry;
  readonly checkpointIntervalMs: number;
  readonly participantName: string;
}

export function createLedgerRuntime(store: SandboxStore, options: LedgerRuntimeOptions = {}): LedgerRuntime {
  const registry = new ModelRegistry();
  const ledger = new ParticipantLedger(store, registry, options.blobSecret);
  return {
    ledger,
    events: new EventRenderer(ledger),
    registry,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 1000,
    participantName: store.participant.name,
  };
}
