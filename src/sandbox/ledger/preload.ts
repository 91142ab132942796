import type { LedgerValue } from "../../lf/index.js";
import { sampleIds } from "../sample-package/index.js";
import type { SandboxStore } from "../sandbox-store.js";
import type { LedgerRuntime } from "./ledger-runtime.js";
import type { StoredContract } from "./ledger-update.js";

export interface PreloadOptions {
  /** How many `Bench:Tick` contracts to create. */
  readonly ticks: number;
  /** Size of each tick's payload text (sets the event size). Default 64. */
  readonly payloadBytes?: number;
  /** Party id hint of the owner (allocated if new). Default `bench`. */
  readonly party?: string;
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
 * Bulk-creates `Bench:Tick` contracts for benchmarks, one transaction per tick (so an update
 * stream over them yields one event per transaction, the worst case for per-message overhead).
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
  for (let seq = 1; seq <= options.ticks; seq++) {
    const createdAt = new Date();
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
      createdOffset: 0,
      createdNodeId: 0,
      createdWorkflowId: "",
      sequence: 0,
      archivedOffset: undefined,
      archivedNodeId: undefined,
    };
    ledger.commit(
      [{ kind: "create", nodeId: 0, contract, witnesses }],
      NO_TRANSIENTS,
      createdAt,
      "",
      undefined,
    );
  }
  return { party, ticks: options.ticks, firstOffset, lastOffset: store.ledgerEnd() };
}

function ensureParty(store: SandboxStore, hint: string): string {
  const party = `${hint}::${store.participant.fingerprint}`;
  if (store.party(party) === undefined) {
    store.allocateParty(party, store.synchronizers[0]!.id, { identityProviderId: "", annotations: {} });
  }
  return party;
}
