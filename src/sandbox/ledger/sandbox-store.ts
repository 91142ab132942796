import { fingerprintOf } from "../identifiers.js";
import type { ReassignmentUpdate, RejectionUpdate, TransactionUpdate } from "./ledger-records.js";

/** The participant the sandbox plays. */
export interface ParticipantIdentity {
  readonly name: string;
  /** The namespace fingerprint local parties are allocated in. */
  readonly fingerprint: string;
  /** `<name>::<fingerprint>`, as GetParticipantId and topology events show it. */
  readonly participantId: string;
}

export interface Synchronizer {
  readonly alias: string;
  readonly id: string;
}

export type ParticipantPermission =
  | "PARTICIPANT_PERMISSION_SUBMISSION"
  | "PARTICIPANT_PERMISSION_CONFIRMATION"
  | "PARTICIPANT_PERMISSION_OBSERVATION";

/** A party known to the participant together with its participant-local record. */
export interface PartyRecord {
  readonly party: string;
  readonly isLocal: boolean;
  /** Permission of this participant on the party, per synchronizer id. */
  readonly permissions: ReadonlyMap<string, ParticipantPermission>;
  readonly identityProviderId: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** Canton's party record store counts from 0 and adds 1 on every update. */
  readonly resourceVersion: number;
}

/** A change of a party's hosting on this participant, as a topology event shows it. */
type TopologyEventRecord =
  | {
      readonly kind: "added" | "changed" | "onboarding";
      readonly partyId: string;
      readonly participantId: string;
      readonly permission: ParticipantPermission;
    }
  | { readonly kind: "revoked"; readonly partyId: string; readonly participantId: string };

/** A party-to-participant change: a topology transaction at an offset, on one synchronizer. */
export interface TopologyUpdate {
  readonly kind: "topology";
  readonly offset: number;
  readonly updateId: string;
  readonly synchronizerId: string;
  readonly recordTime: Date;
  readonly events: readonly TopologyEventRecord[];
}
/**
 * Everything Canton records at an offset: topology transactions, transactions, the two halves
 * of reassignments and command rejections (a rejection has an offset too: its completion's).
 */
export type LedgerUpdate = TopologyUpdate | TransactionUpdate | ReassignmentUpdate | RejectionUpdate;

export interface SandboxStoreOptions {
  readonly participantName: string;
  /** The connected synchronizers, in the order the sandbox prefers them. */
  readonly synchronizerAliases: readonly string[];
}

/**
 * The participant's state, in memory. Services read and change it only through these methods,
 * so later issues (commands, streams, users, packages) share one consistent ledger: every
 * change that Canton records at an offset is appended to `updates` with the next offset.
 */
export class SandboxStore {
  readonly participant: ParticipantIdentity;
  readonly synchronizers: readonly Synchronizer[];
  private readonly parties = new Map<string, PartyRecord>();
  private readonly log: LedgerUpdate[] = [];
  private readonly listeners = new Set<() => void>();
  private prunedUpToInclusive = 0;

  constructor(options: SandboxStoreOptions) {
    const fingerprint = fingerprintOf(`sandbox-participant:${options.participantName}`);
    this.participant = {
      name: options.participantName,
      fingerprint,
      participantId: `${options.participantName}::${fingerprint}`,
    };
    if (options.synchronizerAliases.length === 0) throw new Error("the sandbox needs a synchronizer");
    // Canton's logical synchronizer id: the synchronizer's name in its owner's namespace.
    this.synchronizers = options.synchronizerAliases.map((alias) => ({
      alias,
      id: `${alias}::${fingerprintOf(`sandbox-synchronizer:${alias}`)}`,
    }));
  }

  /** The synchronizer the sandbox prefers (the first): where it records what has no other. */
  get preferredSynchronizerId(): string {
    return this.synchronizers[0]!.id;
  }

  get synchronizerIds(): readonly string[] {
    return this.synchronizers.map((s) => s.id);
  }

  isConnectedTo(synchronizerId: string): boolean {
    return this.synchronizers.some((s) => s.id === synchronizerId);
  }

  /** Whether this participant hosts `party` on `synchronizerId` (any permission). */
  hosts(party: string, synchronizerId: string): boolean {
    return this.parties.get(party)?.permissions.has(synchronizerId) ?? false;
  }

  /** The offset of the last update; 0 while the ledger is empty. */
  ledgerEnd(): number {
    return this.log.length === 0 ? 0 : this.log[this.log.length - 1]!.offset;
  }

  latestPrunedOffset(): number {
    return this.prunedUpToInclusive;
  }

  /**
   * Prunes the history up to `offset` inclusive: reads that start at or below it fail from now
   * on (PARTICIPANT_PRUNED_DATA_ACCESSED); the active contracts stay. The updates are kept in
   * memory only as far as streams already reading them need them; offsets never move.
   */
  prune(offset: number): void {
    if (offset > this.prunedUpToInclusive) this.prunedUpToInclusive = offset;
  }

  get updates(): readonly LedgerUpdate[] {
    return this.log;
  }

  /**
   * Appends the update `make` builds for the next offset; the one place offsets are handed out,
   * so party allocations, transactions and rejections share one counter. Streams are woken up.
   */
  append<U extends LedgerUpdate>(make: (offset: number) => U): U {
    const update = make(this.ledgerEnd() + 1);
    this.log.push(update);
    for (const listener of this.listeners) listener();
    return update;
  }

  /** Index in `updates` of the first update after `offset` (= updates.length when none). */
  indexAfter(offset: number): number {
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.log[mid]!.offset <= offset) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  updateAt(offset: number): LedgerUpdate | undefined {
    const index = this.indexAfter(offset - 1);
    const update = this.log[index];
    return update?.offset === offset ? update : undefined;
  }

  /** Calls `listener` after every append until the returned function is called. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  party(party: string): PartyRecord | undefined {
    return this.parties.get(party);
  }

  /** Known parties in Canton's order (by party id), after `afterParty`, with an id prefix. */
  listParties(afterParty: string | undefined, prefix: string | undefined, limit: number): PartyRecord[] {
    const sorted = [...this.parties.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page: PartyRecord[] = [];
    for (const party of sorted) {
      if (page.length >= limit) break;
      if (afterParty !== undefined && party <= afterParty) continue;
      if (prefix !== undefined && !party.startsWith(prefix)) continue;
      page.push(this.parties.get(party)!);
    }
    return page;
  }

  /**
   * Hosts a new local party on `synchronizerIds`, with submission permission unless said (an
   * external party is hosted to confirm or observe). As on Canton, this is a topology
   * transaction: it takes the next offset and moves the ledger end. The sandbox records one
   * transaction, on the first of the synchronizers, even when it hosts the party on several.
   */
  allocateParty(
    party: string,
    synchronizerIds: readonly string[],
    record: { identityProviderId: string; annotations: Record<string, string> },
    permission: ParticipantPermission = "PARTICIPANT_PERMISSION_SUBMISSION",
  ): PartyRecord {
    const created: PartyRecord = {
      party,
      isLocal: true,
      permissions: new Map(synchronizerIds.map((id) => [id, permission])),
      identityProviderId: record.identityProviderId,
      annotations: { ...record.annotations },
      resourceVersion: 0,
    };
    this.parties.set(party, created);
    this.appendTopology(party, synchronizerIds[0]!, { kind: "added", permission });
    return created;
  }

  /**
   * Hosts a known party on one more synchronizer, or with another permission on one that hosts
   * it already (ParticipantAuthorizationAdded / Changed; Onboarding while its contracts are
   * still being replicated). A change that changes nothing records nothing.
   */
  hostParty(
    party: string,
    synchronizerId: string,
    permission: ParticipantPermission,
    onboarding = false,
  ): TopologyUpdate | undefined {
    const existing = this.parties.get(party);
    if (existing === undefined) throw new Error(`unknown party ${party}`);
    const before = existing.permissions.get(synchronizerId);
    if (before === permission && !onboarding) return undefined;
    const permissions = new Map(existing.permissions);
    permissions.set(synchronizerId, permission);
    this.parties.set(party, { ...existing, permissions });
    const kind = onboarding ? "onboarding" : before === undefined ? "added" : "changed";
    return this.appendTopology(party, synchronizerId, { kind, permission });
  }

  /** Stops hosting a party on a synchronizer (ParticipantAuthorizationRevoked). */
  revokeParty(party: string, synchronizerId: string): TopologyUpdate | undefined {
    const existing = this.parties.get(party);
    if (existing === undefined || !existing.permissions.has(synchronizerId)) return undefined;
    const permissions = new Map(existing.permissions);
    permissions.delete(synchronizerId);
    this.parties.set(party, { ...existing, permissions });
    return this.appendTopology(party, synchronizerId, { kind: "revoked" });
  }

  private appendTopology(
    party: string,
    synchronizerId: string,
    change:
      | { kind: "added" | "changed" | "onboarding"; permission: ParticipantPermission }
      | { kind: "revoked" },
  ): TopologyUpdate {
    const participantId = this.participant.participantId;
    return this.append(
      (offset): TopologyUpdate => ({
        kind: "topology",
        offset,
        updateId: fingerprintOf(`sandbox-update:${offset}:${party}`),
        synchronizerId,
        recordTime: new Date(),
        events: [{ ...change, partyId: party, participantId }],
      }),
    );
  }

  /** Replaces a party's participant-local record (metadata, identity provider). */
  updatePartyRecord(
    party: string,
    change: Pick<PartyRecord, "annotations" | "resourceVersion" | "identityProviderId">,
  ): PartyRecord {
    const existing = this.parties.get(party);
    if (existing === undefined) throw new Error(`unknown party ${party}`);
    const updated: PartyRecord = { ...existing, ...change };
    this.parties.set(party, updated);
    return updated;
  }
}
