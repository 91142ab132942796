import { InFlightQuestions } from "../fanout/in-flight-questions.js";
import { userKey } from "../jwt/bearer-token.js";
import type { HeldTokens } from "../jwt/held-tokens.js";
import type { StreamSlots } from "../ledger/stream-slots.js";
import type { LedgerStreamBudget } from "../limits/ledger-stream-budget.js";

/**
 * The stream budget's slots as the ledger client claims them, each charged to the user its
 * call's token names (its subject within its issuer), so that one user holds at most its share
 * (limits.ledger-streams-per-user).
 *
 * A token's subject is only what its sender wrote until someone checked the signature. Where
 * the gateway verifies tokens itself (`verified`: auth.mode hs256, rs256, es256) every token a
 * call carries passed that check. Where it does not (none, unsafe-decode), charging the subject
 * as sent let forged tokens naming a user take that user's shares: a flood of them, each refused
 * by the ledger in the end, had the user's own streams answered 429 and its re-checks starved.
 * So there the second half of a user's share goes only to tokens the ledger accepted:
 * - a token held as accepted (see HeldTokens: a WebSocket's since its upgrade, a list twin's
 *   since its first claim here) is charged at once;
 * - so is any other while claims nobody judged hold less than half its user's share and less
 *   than half the budget's slots (LedgerStreamBudget.holdUnjudged): the question would cost
 *   every list twin a ledger call (a quarter more of the gateway's CPU for one at a time), and
 *   forged tokens can take at most those halves, each for as long as the ledger takes to refuse
 *   it (found from outside: without the budget's half, forged tokens each naming a user of
 *   their own, each under half its share, filled the budget);
 * - past either, a token is first asked about with `admission` (a call every token the ledger
 *   accepts may make; one question for the claims of a token in flight together), then charged,
 *   and held as accepted while its claim lasts (and while its request holds it), so that the
 *   stream's later calls (its re-checks, its empty answer's verdict) need not ask again; a
 *   refusal is the stream's answer, with nothing charged to anyone.
 * However forged tokens come, a user keeps at least half its share for tokens that are its own,
 * and tokens someone judged at least half the budget. Calls without a token cannot be asked
 * about: they are charged at once to the share of claims that name no user.
 * Claims that name no user share one share of their own: no token (asked about by the call
 * itself: an anonymous caller can take nobody else's share), or a token without a subject or
 * not a JWT at all, asked about like any other first (found from outside: charged at once to its
 * issuer and an empty subject, forged tokens each with an issuer of its own took a share each
 * and filled the budget).
 */
export function chargedStreamSlots(
  budget: LedgerStreamBudget,
  tokens: HeldTokens,
  /** Resolves once the ledger accepted the token, rejects with its refusal; "verified": the gateway verifies every token. */
  admission: ((token: string) => Promise<void>) | "verified",
): StreamSlots {
  const questions = new InFlightQuestions();
  return {
    claim(granted, refused, purpose, token) {
      const claims = token === undefined ? undefined : tokens.claims(token);
      // No subject, no user: whatever else the token says (an issuer of its own), one share.
      const user = claims?.subject === undefined ? undefined : userKey(claims);
      if (admission === "verified" || token === undefined || tokens.accepted(token))
        return budget.claim(granted, refused, purpose, user);
      const unjudged = budget.holdUnjudged(purpose, user);
      if (unjudged !== undefined) {
        const end = budget.claim(granted, refused, purpose, user);
        return () => {
          end();
          unjudged();
        };
      }
      let ended = false;
      let release: (() => void) | undefined;
      const charge = () => {
        if (ended) return;
        tokens.hold(token);
        tokens.accept(token);
        let end: (() => void) | undefined;
        release = () => {
          tokens.release(token);
          end?.();
        };
        end = budget.claim(granted, refused, purpose, user);
        // Ended while claiming (refused, or a call that failed as it opened): end the claim too.
        if (ended) end();
      };
      questions
        .ask(tokens.digest(token), () => admission(token))
        .then(charge, (error: unknown) => {
          if (!ended) refused({ reason: "token-refused", error });
        });
      return () => {
        if (ended) return;
        ended = true;
        release?.();
      };
    },
  };
}
