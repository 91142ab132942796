/**
 * The participant's stream budget as the ledger client sees it: a slot per server stream, taken
 * before its call opens and given back when it ends. The gateway wires it in (src/limits'
 * LedgerStreamBudget, shared by all worker threads), so that the client stays free of the limits.
 */
export interface StreamSlots {
  /**
   * Asks for a slot for `purpose`, charged to the user of `token` (the call's own token: each
   * user holds at most a share): `granted` once one is held, or `refused` (the user's share
   * taken, queue full, waited too long, or the ledger refused the token before its user was
   * charged); one of them, at most once. The function returned ends
   * the claim, however often it is called: a held slot goes back once, a waiting one leaves the
   * queue.
   */
  claim(
    granted: () => void,
    refused: (refusal: StreamSlotRefusal) => void,
    purpose: StreamPurpose,
    token: string | undefined,
  ): () => void;
}

/**
 * What a server stream is for. A subscription streams to a client; an authorization call asks
 * the ledger whether a subscriber may read (a probe), and has a share of the budget that
 * subscriptions cannot take, so that they cannot starve it.
 */
export type StreamPurpose = "subscription" | "authorization";

/**
 * Why no slot was given: the budget's refusal with its settings (what the error body says), or
 * the ledger's refusal of the token, asked before its user was charged (the stream's answer).
 */
type StreamSlotRefusal = BudgetRefusal | TokenRefusal;

interface TokenRefusal {
  readonly reason: "token-refused";
  /** The ledger's error, as its calls fail. */
  readonly error: unknown;
}

interface BudgetRefusal {
  readonly reason: "queue-full" | "queue-timeout" | "user-share";
  readonly purpose: StreamPurpose;
  /** The user's share of `purpose` (limits.ledger-streams-per-user). */
  readonly perUser: number;
  readonly limit: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
}
