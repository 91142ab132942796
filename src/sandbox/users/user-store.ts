import { errors } from "../errors.js";
import { userErrors } from "./user-errors.js";
import { rightKey, type UserRight } from "./user-rights.js";

/** Canton's bootstrap administrator (UserManagementStore.DefaultParticipantAdminUserId). */
const PARTICIPANT_ADMIN_USER = "participant_admin";

export interface UserRecord {
  readonly id: string;
  /** "" when the user has none. */
  readonly primaryParty: string;
  readonly isDeactivated: boolean;
  readonly annotations: Readonly<Record<string, string>>;
  /** Counts from 0; every accepted update adds 1 (grants and revokes do not). */
  readonly resourceVersion: number;
  readonly identityProviderId: string;
  readonly primaryPartyAuthentication: boolean;
}

export type NewUser = Omit<UserRecord, "resourceVersion">;

export interface UserUpdate {
  readonly id: string;
  readonly identityProviderId: string;
  readonly primaryParty?: string;
  readonly isDeactivated?: boolean;
  readonly primaryPartyAuthentication?: boolean;
  /** New annotations merged over the existing ones ("" removes a key). */
  readonly annotations?: Readonly<Record<string, string>>;
  /** When given, the update only applies to this version (optimistic concurrency). */
  readonly resourceVersion?: number;
}

interface Entry {
  user: UserRecord;
  rights: Map<string, UserRight>;
}

/**
 * The participant's users and their rights, in memory, with Canton's store semantics
 * (InMemoryUserManagementStore + the persistent store's rights limit): a user is addressed
 * together with its identity provider; a user of another provider is PERMISSION_DENIED, an
 * absent one USER_NOT_FOUND. Validation of request fields is the service's job.
 */
export class UserStore {
  private readonly users = new Map<string, Entry>();

  constructor(private readonly maxRightsPerUser: number) {
    this.users.set(PARTICIPANT_ADMIN_USER, {
      user: {
        id: PARTICIPANT_ADMIN_USER,
        primaryParty: "",
        isDeactivated: false,
        annotations: {},
        resourceVersion: 0,
        identityProviderId: "",
        primaryPartyAuthentication: false,
      },
      rights: new Map([["ParticipantAdmin", { kind: "ParticipantAdmin" }]]),
    });
  }

  /** The user whatever its identity provider: for resolving a token's claims. */
  lookup(id: string): { user: UserRecord; rights: UserRight[] } | undefined {
    const entry = this.users.get(id);
    return entry === undefined ? undefined : { user: entry.user, rights: [...entry.rights.values()] };
  }

  create(user: NewUser, rights: readonly UserRight[], operation: string): UserRecord {
    const existing = this.users.get(user.id);
    if (existing !== undefined) {
      if (existing.user.identityProviderId !== user.identityProviderId) throw otherProvider(user.id);
      throw userErrors.userAlreadyExists(operation, user.id);
    }
    if (rights.length > this.maxRightsPerUser) throw userErrors.tooManyUserRights(operation, user.id);
    const created: UserRecord = { ...user, resourceVersion: 0 };
    this.users.set(user.id, { user: created, rights: new Map(rights.map((r) => [rightKey(r), r])) });
    return created;
  }

  get(id: string, identityProviderId: string, operation: string): UserRecord {
    return this.entry(id, identityProviderId, operation).user;
  }

  rights(id: string, identityProviderId: string, operation: string): UserRight[] {
    return [...this.entry(id, identityProviderId, operation).rights.values()];
  }

  update(update: UserUpdate, operation: string, merge: (existing: UserRecord) => UserRecord): UserRecord {
    const entry = this.entry(update.id, update.identityProviderId, operation);
    if (update.resourceVersion !== undefined && update.resourceVersion !== entry.user.resourceVersion)
      throw userErrors.concurrentUserUpdate(update.id);
    entry.user = { ...merge(entry.user), resourceVersion: entry.user.resourceVersion + 1 };
    return entry.user;
  }

  delete(id: string, identityProviderId: string, operation: string): void {
    this.entry(id, identityProviderId, operation);
    this.users.delete(id);
  }

  /** Adds the rights; answers those the user did not hold yet. */
  grant(
    id: string,
    rights: readonly UserRight[],
    identityProviderId: string,
    operation: string,
  ): UserRight[] {
    const entry = this.entry(id, identityProviderId, operation);
    const fresh = rights.filter((r) => !entry.rights.has(rightKey(r)));
    if (entry.rights.size + fresh.length > this.maxRightsPerUser)
      throw userErrors.tooManyUserRights(operation, id);
    for (const right of fresh) entry.rights.set(rightKey(right), right);
    return fresh;
  }

  /** Removes the rights; answers those the user actually held. */
  revoke(
    id: string,
    rights: readonly UserRight[],
    identityProviderId: string,
    operation: string,
  ): UserRight[] {
    const entry = this.entry(id, identityProviderId, operation);
    const held = rights.filter((r) => entry.rights.has(rightKey(r)));
    for (const right of held) entry.rights.delete(rightKey(right));
    return held;
  }

  /** Users of one identity provider in id order, after `afterId`. */
  list(afterId: string | undefined, limit: number, identityProviderId: string): UserRecord[] {
    const ids = [...this.users.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page: UserRecord[] = [];
    for (const id of ids) {
      if (page.length >= limit) break;
      if (afterId !== undefined && id <= afterId) continue;
      const user = this.users.get(id)!.user;
      if (user.identityProviderId === identityProviderId) page.push(user);
    }
    return page;
  }

  moveToIdentityProvider(id: string, source: string, target: string, operation: string): UserRecord {
    const entry = this.entry(id, source, operation);
    entry.user = { ...entry.user, identityProviderId: target };
    return entry.user;
  }

  /** Grants act_as after a party allocation (PartyAllocationUsers). */
  grantActAs(id: string, party: string, identityProviderId: string): void {
    this.grant(id, [{ kind: "CanActAs", party }], identityProviderId, "grant user rights");
  }

  private entry(id: string, identityProviderId: string, operation: string): Entry {
    const entry = this.users.get(id);
    if (entry === undefined) throw userErrors.userNotFound(operation, id);
    if (entry.user.identityProviderId !== identityProviderId) throw otherProvider(id);
    return entry;
  }
}

function otherProvider(id: string) {
  return errors.permissionDenied(`User ${id} belongs to another Identity Provider`);
}
