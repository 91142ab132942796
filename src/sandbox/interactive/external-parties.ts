import type { SigningKey } from "./signing-keys.js";

/** The protocol signing keys of an external party and how many of them must sign. */
export interface ExternalPartyKeys {
  readonly keys: readonly SigningKey[];
  readonly threshold: number;
}

/**
 * External parties hosted here, with the keys their PartyToParticipant registered: what
 * ExecuteSubmission checks signatures against. Their party records live in the SandboxStore.
 */
export class ExternalParties {
  private readonly byParty = new Map<string, ExternalPartyKeys>();

  register(party: string, keys: ExternalPartyKeys): void {
    this.byParty.set(party, keys);
  }

  keysOf(party: string): ExternalPartyKeys | undefined {
    return this.byParty.get(party);
  }
}
