import { timestamp } from "../../protocol-values.js";
import type { TransactionUpdate } from "../ledger-records.js";
import type { CompiledEventFormat } from "./event-format.js";
import type { EventRenderer } from "./event-renderer.js";

type TransactionShape = "ACS_DELTA" | "LEDGER_EFFECTS";

export interface TransactionFormat {
  readonly shape: TransactionShape;
  readonly events: CompiledEventFormat;
}

const intersects = (parties: readonly string[], set: ReadonlySet<string>) => parties.some((p) => set.has(p));

/**
 * A transaction as one reader sees it (Ledger API `Transaction`), or undefined when none of its
 * events is visible — such a transaction is not shown at all.
 *
 * ACS_DELTA: creates and archives (from consuming exercises) of contracts whose stakeholders
 * include a requested party with a matching filter; contracts created and archived in the same
 * transaction (transient) are left out (Canton 3.4+). LEDGER_EFFECTS: creates and exercises
 * whose witnesses (informees of the node and of its ancestors) include a requested party.
 */
export function projectTransaction(
  tx: TransactionUpdate,
  format: TransactionFormat,
  renderer: EventRenderer,
): object | undefined {
  const events: object[] = [];
  const { events: eventFormat } = format;
  const verbose = eventFormat.verbose;
  const offset = tx.offset;
  for (const node of tx.nodes) {
    const contract = node.contract;
    const transient = tx.transient.has(contract.contractId);
    if (format.shape === "ACS_DELTA") {
      if (transient) continue;
      if (node.kind === "create") {
        const selection = eventFormat.select(contract.templateId, contract.stakeholders);
        if (selection === undefined) continue;
        const placement = { offset, nodeId: node.nodeId, selection, verbose, acsDelta: true };
        events.push({ created: renderer.created(contract, placement) });
      } else if (node.consuming) {
        const selection = eventFormat.select(contract.templateId, contract.stakeholders);
        if (selection === undefined) continue;
        events.push({ archived: renderer.archived(contract, { offset, nodeId: node.nodeId, selection }) });
      }
      continue;
    }
    const selection = eventFormat.select(contract.templateId, node.witnesses);
    if (selection === undefined) continue;
    const acsDelta =
      !transient &&
      (node.kind === "create" || node.consuming) &&
      intersects(selection.witnesses, contract.stakeholders);
    const placement = { offset, nodeId: node.nodeId, selection, verbose, acsDelta };
    events.push(
      node.kind === "create"
        ? { created: renderer.created(contract, placement) }
        : { exercised: renderer.exercised(node, placement) },
    );
  }
  if (events.length === 0) return undefined;
  return transactionMessage(tx, eventFormat, events);
}

/** The transaction envelope around `events` (also used for an empty submit-and-wait answer). */
export function transactionMessage(
  tx: TransactionUpdate,
  eventFormat: CompiledEventFormat,
  events: object[],
) {
  const submitters = tx.completion?.actAs ?? [];
  return {
    updateId: tx.updateId,
    commandId:
      tx.completion !== undefined && eventFormat.readsAsAnyOf(submitters) ? tx.completion.commandId : "",
    workflowId: tx.workflowId,
    effectiveAt: timestamp(tx.effectiveAt),
    events,
    offset: tx.offset,
    synchronizerId: tx.synchronizerId,
    traceContext: null,
    recordTime: timestamp(tx.recordTime),
    ...(tx.externalTransactionHash === undefined
      ? {}
      : { externalTransactionHash: tx.externalTransactionHash }),
    ...(tx.transactionHash === undefined ? {} : { transactionHash: tx.transactionHash }),
  };
}
