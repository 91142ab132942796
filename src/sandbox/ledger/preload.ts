import type { LedgerValue } from "../../lf/index.js";
import { sampleIds } from "../sample-package/index.js";
import { NOT_YET_COMMITTED } from "./commands/contract-factory.js";
import type { StoredContract } from "./ledger-records.js";
import type { LedgerRuntime } from "./ledger-runtime.js";
import type { SandboxStore } from "./sandbox-store.js";

export interface PreloadOptions {
  /** How many `Bench:Tick` contracts to create. */
  readonly ticks: number;
  /** Size of each tick's payload text (sets the event size). Default 64. */
  readonly payloadBytes?: number;
  /** Party id hint of the owner (allocated if new). Default `bench`. */
  readonly party?: string;
  /** Ticks created per transaction (one create event each). Default 1, the worst case per message. */
  readonly perTransaction?: number;
}

export interface PreloadResult {
  /** The party that owns (is signatory of) every preloaded tick. */
  readonly party: string;
  readonly ticks: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
}

const NO_TRANSIENTS: ReadonlySet<string> = new Set();

/**
 * Bulk-creates `Bench:Tick` contracts for benchmarks, `perTransaction` ticks per transaction
 * (default one: an update stream then yields one event per message, the worst case for
 * per-message overhead).
 * It skips command interpretation and the value codec: the tick's Value is built directly, and
 * the transaction is committed as the command engine would have produced it. 200k ticks take a
 * second or two.
 */
export function preloadTicks(
  runtime: LedgerRuntime,
  store: SandboxStore,
  options: PreloadOptions,
): PreloadResult {
  const party = ensureParty(store, options.party ?? "bench");
  const payload = "x".repeat(options.payloadBytes ?? 64);
  const { ledger } = runtime;
  const templateId = sampleIds.tick;
  const packageName = runtime.registry.packageName(templateId.packageId);
  const signatories = [party];
  const stakeholders = new Set(signatories);
  const witnesses = [party];
  const firstOffset = store.ledgerEnd() + 1;
  const perTransaction = Math.max(1, options.perTransaction ?? 1);
  for (let first = 1; first <= options.ticks; first += perTransaction) {
    const createdAt = new Date();
    const last = Math.min(options.ticks, first + perTransaction - 1);
    const nodes = [];
    for (let seq = first; seq <= last; seq++) {
      const argumentValue: LedgerValue = {
        record: {
          recordId: null,
          fields: [
            { label: "owner", value: { party } },
            { label: "seq", value: { int64: String(seq) } },
            { label: "payload", value: { text: payload } },
          ],
        },
      };
      const contract: StoredContract = {
        contractId: ledger.contractIds.next(),
        templateId,
        packageName,
        argument: { owner: party, seq: String(seq), payload },
        argumentValue,
        signatories,
        observers: [],
        stakeholders,
        key: undefined,
        createdAt,
        ...NOT_YET_COMMITTED,
        synchronizerId: "",
        reassignments: [],
      };
      nodes.push({ kind: "create" as const, nodeId: seq - first, contract, witnesses });
    }
    ledger.commit({
      nodes,
      transient: NO_TRANSIENTS,
      effectiveAt: createdAt,
      workflowId: "",
      completion: undefined,
      synchronizerId: store.preferredSynchronizerId,
    });
  }
  return { party, ticks: options.ticks, firstOffset, lastOffset: store.ledgerEnd() };
}

function ensureParty(store: SandboxStore, hint: string): string {
  const party = `${hint}::${store.participant.fingerprint}`;
  if (store.party(party) === undefined) {
    store.allocateParty(party, store.synchronizerIds, { identityProviderId: "", annotations: {} });
  }
  return party;
}
