import { userErrors } from "./user-errors.js";

/** Canton's participant default (IdentityProviderManagementConfig.MaxIdentityProviders). */
export const MAX_IDENTITY_PROVIDER_CONFIGS = 16;

export interface IdentityProviderRecord {
  readonly identityProviderId: string;
  readonly isDeactivated: boolean;
  readonly jwksUrl: string;
  readonly issuer: string;
  /** "" when the provider's tokens need no particular audience. */
  readonly audience: string;
}

export type IdentityProviderChange = Partial<Omit<IdentityProviderRecord, "identityProviderId">>;

/**
 * Identity provider configurations, in memory, with Canton's store rules: ids and issuers are
 * unique, and there are at most `max` configurations. The default provider ("") always exists
 * and is not a configuration.
 */
export class IdentityProviderStore {
  private readonly configs = new Map<string, IdentityProviderRecord>();

  constructor(private readonly max = MAX_IDENTITY_PROVIDER_CONFIGS) {}

  /** A bound function: services pass it on as a predicate. */
  readonly exists = (id: string): boolean => id === "" || this.configs.has(id);

  byIssuer(issuer: string): IdentityProviderRecord | undefined {
    for (const config of this.configs.values()) if (config.issuer === issuer) return config;
    return undefined;
  }

  create(config: IdentityProviderRecord, operation: string): IdentityProviderRecord {
    if (this.configs.has(config.identityProviderId))
      throw userErrors.idpAlreadyExists(operation, config.identityProviderId);
    if (this.byIssuer(config.issuer) !== undefined)
      throw userErrors.idpIssuerAlreadyExists(operation, config.issuer);
    if (this.configs.size >= this.max) throw userErrors.tooManyIdps(operation);
    this.configs.set(config.identityProviderId, config);
    return config;
  }

  get(id: string, operation: string): IdentityProviderRecord {
    const config = this.configs.get(id);
    if (config === undefined) throw userErrors.idpNotFound(operation, id);
    return config;
  }

  update(id: string, change: IdentityProviderChange, operation: string): IdentityProviderRecord {
    const existing = this.get(id, operation);
    if (change.issuer !== undefined && change.issuer !== existing.issuer) {
      if (this.byIssuer(change.issuer) !== undefined)
        throw userErrors.idpIssuerAlreadyExists(operation, change.issuer);
    }
    const updated = { ...existing, ...change };
    this.configs.set(id, updated);
    return updated;
  }

  delete(id: string, operation: string): void {
    this.get(id, operation);
    this.configs.delete(id);
  }

  list(): IdentityProviderRecord[] {
    return [...this.configs.values()];
  }
}
