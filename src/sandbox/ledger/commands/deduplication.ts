import type { DeduplicationPeriod } from "../ledger-records.js";

/** An accepted command's completion, as deduplication remembers it. */
export interface AcceptedChange {
  readonly offset: number;
  readonly recordTime: number;
  readonly submissionId: string;
}

/**
 * Command deduplication: a submission is a duplicate when a command with the same change id
 * (user id, the set of actAs parties, command id) was accepted inside the deduplication period,
 * given as a duration back from now or as an offset after which to look.
 */
export class Deduplicator {
  private readonly accepted = new Map<string, AcceptedChange>();

  static changeId(userId: string, actAs: readonly string[], commandId: string): string {
    return JSON.stringify([userId, [...new Set(actAs)].sort(), commandId]);
  }

  duplicateOf(changeId: string, period: DeduplicationPeriod, now: number): AcceptedChange | undefined {
    const previous = this.accepted.get(changeId);
    if (previous === undefined) return undefined;
    if (period.kind === "none") return undefined;
    if (period.kind === "offset") return previous.offset > period.offset ? previous : undefined;
    const windowMs = period.seconds * 1000 + period.nanos / 1e6;
    return previous.recordTime > now - windowMs ? previous : undefined;
  }

  accept(changeId: string, change: AcceptedChange): void {
    this.accepted.set(changeId, change);
  }
}
