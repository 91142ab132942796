import type { LedgerUpdate } from "../sandbox-store.js";
import type { EventRenderer } from "./event-renderer.js";
import { projectTransaction } from "./transaction-projection.js";
import { type CompiledUpdateFormat, projectTopology } from "./update-format.js";

/** One update as a GetUpdatesResponse / GetUpdateResponse oneof member. */
export type RenderedUpdate = { transaction: object } | { topologyTransaction: object };

/**
 * Renders updates for one UpdateFormat. The last rendering of each transaction is kept on the
 * transaction under the format's key: benchmark readers stream the same ledger with the same
 * format again and again, and then pay only for serialization.
 */
export function renderUpdate(
  update: LedgerUpdate,
  format: CompiledUpdateFormat,
  renderer: EventRenderer,
): RenderedUpdate | undefined {
  switch (update.kind) {
    case "transaction": {
      if (format.transactions === undefined) return undefined;
      const cached = update.rendered;
      if (cached !== undefined && cached.key === format.key)
        return cached.message as RenderedUpdate | undefined;
      const transaction = projectTransaction(update, format.transactions, renderer);
      const message = transaction === undefined ? undefined : { transaction };
      update.rendered = { key: format.key, message };
      return message;
    }
    case "topology": {
      if (format.topologyParties === undefined) return undefined;
      const topologyTransaction = projectTopology(update, format.topologyParties);
      return topologyTransaction === undefined ? undefined : { topologyTransaction };
    }
    case "rejection":
      return undefined;
  }
}
