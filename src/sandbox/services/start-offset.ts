import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";

/** How a read names its start offset in the errors about it. */
interface StartOffsetNames {
  /** The request field, as OFFSET_OUT_OF_RANGE names it: `begin_exclusive`. */
  readonly field: string;
  /** The offset's kind, as OFFSET_AFTER_LEDGER_END names it: `Begin`. */
  readonly kind: string;
  /** PARTICIPANT_PRUNED_DATA_ACCESSED's cause, which each read words its own way. */
  readonly prunedCause: (pruned: number, ledgerEnd: number) => string;
}

/**
 * Checks the offset a read starts from, in Canton's order: not negative, not after the ledger
 * end, not before the pruned offset.
 */
export function checkStartOffset(store: SandboxStore, offset: number, names: StartOffsetNames): void {
  if (offset < 0)
    throw ledgerErrors.offsetOutOfRange(`Offset ${offset} in ${names.field} is a negative integer`);
  const ledgerEnd = store.ledgerEnd();
  if (offset > ledgerEnd) throw ledgerErrors.offsetAfterLedgerEnd(names.kind, offset, ledgerEnd);
  const pruned = store.latestPrunedOffset();
  if (offset < pruned) {
    throw ledgerErrors.participantPrunedDataAccessed(names.prunedCause(pruned, ledgerEnd), pruned);
  }
}
