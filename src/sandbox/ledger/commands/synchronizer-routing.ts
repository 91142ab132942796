import { ledgerErrors } from "../ledger-errors.js";
import type { StoredContract, TransactionNode } from "../ledger-records.js";
import type { SandboxStore } from "../sandbox-store.js";

/** Whether a contract is between its unassignment and its assignment. */
export function inFlight(contract: StoredContract): boolean {
  return contract.reassignments.at(-1)?.steps.some((s) => s.kind === "unassigned") ?? false;
}

/**
 * The synchronizer a transaction is committed on, as Canton's router picks it: the prescribed
 * one if the commands name it (its input contracts and informees must be there), else the one
 * its input contracts are on, else the first connected synchronizer that hosts every informee.
 * Parties the sandbox does not know are hosted elsewhere: they do not constrain the choice.
 */
export function routeTransaction(
  store: SandboxStore,
  prescribed: string,
  nodes: readonly TransactionNode[],
  submitters: readonly string[],
): string {
  const created = new Set<StoredContract>();
  const inputs = new Set<StoredContract>();
  const informees = new Set<string>(submitters);
  for (const node of nodes) {
    if (node.kind === "create") created.add(node.contract);
    // A contract this participant never committed (disclosed, created elsewhere) has no synchronizer here.
    else if (!created.has(node.contract) && node.contract.synchronizerId !== "") inputs.add(node.contract);
    for (const party of node.witnesses) informees.add(party);
  }
  const moving = [...inputs].filter(inFlight).map((c) => c.contractId);
  if (moving.length > 0) throw ledgerErrors.unknownContractSynchronizers(moving);
  const known = [...informees].filter((p) => store.party(p) !== undefined);
  const hostsAll = (id: string) => known.every((p) => store.hosts(p, id));
  const inputSynchronizers = [...new Set([...inputs].map((c) => c.synchronizerId))];
  if (prescribed !== "") {
    if (!store.isConnectedTo(prescribed)) throw ledgerErrors.submissionSynchronizerNotReady();
    const elsewhere = inputSynchronizers.find((id) => id !== prescribed);
    if (elsewhere !== undefined) throw ledgerErrors.inputContractsNotOnSynchronizer(prescribed, elsewhere);
    if (!hostsAll(prescribed)) {
      throw ledgerErrors.notAllInformeesOnSynchronizer(prescribed, store.synchronizerIds.filter(hostsAll));
    }
    return prescribed;
  }
  // Canton would reassign inputs spread over several synchronizers first; the sandbox does not.
  if (inputSynchronizers.length > 1) throw ledgerErrors.noCommonSynchronizer();
  const candidates = inputSynchronizers.length === 1 ? inputSynchronizers : store.synchronizerIds;
  const chosen = candidates.find(hostsAll);
  if (chosen === undefined) throw ledgerErrors.noCommonSynchronizer();
  return chosen;
}
