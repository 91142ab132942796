import { parentPort } from "node:worker_threads";
import { LedgerStreamBudget, type LedgerStreamPurpose } from "../../src/limits/ledger-stream-budget.js";
import { moduleWorkerData } from "../../src/threads/module-worker.js";
import { seededRandom } from "../support/seeded-random.js";
import { workerAnswer } from "../support/worker-answer.js";

/**
 * A worker thread that contends for a shared stream budget: `claims` claims at once, each of a
 * purpose drawn from `seed` (`authorizationShare` of them authorization calls), held for a few
 * turns of the event loop and then given back; some are ended at a random turn instead, while
 * they may still wait (they leave the queue). Next to the budget's own counters, words of
 * `inUse` count the slots held by every thread, as their holders see them, and keep the most
 * ever seen. At every grant and every end the thread checks both against the bounds (the budget,
 * and the subscriptions' share of it) and counts what passed them. With `users`, each claim is
 * one of that many users' (drawn from `seed`), each user holding at most `perUser` of a purpose
 * (held and waiting): words of `inUse` after IN_USE's count each user's held slots as their
 * holders see them, checked against `perUser` at every step too, as is the budget's own count.
 */
interface HammerData {
  buffer: SharedArrayBuffer;
  /** Int32 words: see IN_USE. */
  inUse: SharedArrayBuffer;
  limit: number;
  reservedForAuthorization: number;
  claims: number;
  /** Of the claims, the share that are authorization calls (0: subscriptions only). */
  authorizationShare: number;
  /** Of the claims, the share ended at a random turn, waiting or not. */
  leaverShare: number;
  seed: number;
  /** Users the claims are spread over (default: 1, no share of its own). */
  users?: number;
  /** Each user's share of each purpose (subscriptionsPerUser and authorizationsPerUser). */
  perUser?: number;
}

/** The words of `inUse`: held now by holders' count, and the most seen, in total and by subscriptions. */
export const IN_USE = { total: 0, subscriptions: 1, mostTotal: 2, mostSubscriptions: 3, words: 4 } as const;

/** The word of `inUse` that counts `user`'s held slots of `purpose`, after IN_USE's words. */
export function userWord(user: number, purpose: LedgerStreamPurpose): number {
  return IN_USE.words + 2 * user + (purpose === "subscription" ? 0 : 1);
}

export interface HammerResult {
  granted: Record<LedgerStreamPurpose, number>;
  refused: number;
  /** Refusals by reason. */
  refusedFor: Record<string, number>;
  /** Claims ended before they were granted. */
  left: number;
  /** Steps at which a count passed its bound, and the first one seen. */
  violations: number;
  firstViolation?: string;
}

const MARK = "streamBudgetHammerWorker";

/** Runs one contending worker; resolves with what its claims got. */
export function hammerBudget(data: HammerData): Promise<HammerResult> {
  return workerAnswer(import.meta.url, MARK, data);
}

/** Raises `word` to `value` if it is higher: the most ever seen. */
function raise(words: Int32Array, word: number, value: number): void {
  for (let most = Atomics.load(words, word); value > most; most = Atomics.load(words, word))
    Atomics.compareExchange(words, word, most, value);
}

const data = moduleWorkerData<HammerData>(MARK);
if (data !== undefined) {
  const { limit, reservedForAuthorization } = data;
  const share = limit - reservedForAuthorization;
  const inUse = new Int32Array(data.inUse);
  const users = data.users ?? 1;
  // Users' words only where the caller made room for them (with `users`).
  const userWords = data.users !== undefined;
  const addUser = (user: number, purpose: LedgerStreamPurpose, n: number) => {
    if (userWords) Atomics.add(inUse, userWord(user, purpose), n);
  };
  const perUser = data.perUser ?? 2 ** 31 - 1;
  const budget = new LedgerStreamBudget(data.buffer, {
    limit,
    reservedForAuthorization,
    queueLimit: 1_000_000,
    queueTimeoutMs: 600_000,
    subscriptionsPerUser: perUser,
    authorizationsPerUser: perUser,
  });
  const next = seededRandom(data.seed);
  const result: HammerResult = {
    granted: { subscription: 0, authorization: 0 },
    refused: 0,
    refusedFor: {},
    left: 0,
    violations: 0,
  };
  const check = (step: string, user: number, purpose: LedgerStreamPurpose) => {
    // Each count is one load of its own: two of them may straddle another thread's claim, so
    // each is held to its bound, not to the other.
    const counts = {
      held: budget.held(),
      heldBySubscriptions: budget.held("subscription"),
      inUse: Atomics.load(inUse, IN_USE.total),
      inUseBySubscriptions: Atomics.load(inUse, IN_USE.subscriptions),
      userInUse: userWords ? Atomics.load(inUse, userWord(user, purpose)) : 0,
      userClaims: budget.heldBy(`u${user}`, purpose),
    };
    const ok =
      counts.userInUse <= perUser &&
      counts.userInUse >= 0 &&
      counts.userClaims <= perUser &&
      counts.held <= limit &&
      counts.heldBySubscriptions <= share &&
      counts.heldBySubscriptions >= 0 &&
      counts.inUse <= limit &&
      counts.inUseBySubscriptions <= share;
    if (ok) return;
    result.violations++;
    result.firstViolation ??= `${step}: ${JSON.stringify(counts)}`;
  };
  const claims = Array.from({ length: data.claims }, (_, i) => {
    const purpose: LedgerStreamPurpose = next() < data.authorizationShare ? "authorization" : "subscription";
    const turns = 1 + Math.floor(next() * 3);
    const leaver = next() < data.leaverShare;
    const user = Math.floor(next() * users);
    return new Promise<void>((done) => {
      let granted = false;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        if (granted) {
          Atomics.sub(inUse, IN_USE.total, 1);
          if (purpose === "subscription") Atomics.sub(inUse, IN_USE.subscriptions, 1);
          addUser(user, purpose, -1);
        } else result.left++;
        end();
        check(`end of claim ${i}`, user, purpose);
        done();
      };
      const end = budget.claim(
        () => {
          granted = true;
          result.granted[purpose]++;
          raise(inUse, IN_USE.mostTotal, Atomics.add(inUse, IN_USE.total, 1) + 1);
          if (purpose === "subscription")
            raise(inUse, IN_USE.mostSubscriptions, Atomics.add(inUse, IN_USE.subscriptions, 1) + 1);
          addUser(user, purpose, 1);
          check(`grant of claim ${i}`, user, purpose);
          if (leaver) return;
          // Held over a few turns, so that the other thread finds the budget full.
          let left = turns;
          const hold = () => (--left > 0 ? setImmediate(hold) : finish());
          setImmediate(hold);
        },
        (refusal) => {
          result.refused++;
          result.refusedFor[refusal.reason] = (result.refusedFor[refusal.reason] ?? 0) + 1;
          finished = true;
          check(`refusal of claim ${i}`, user, purpose);
          done();
        },
        purpose,
        `u${user}`,
      );
      if (leaver) {
        let left = turns;
        const wait = () => (--left > 0 ? setImmediate(wait) : finish());
        setImmediate(wait);
      }
    });
  });
  void Promise.all(claims).then(() => parentPort?.postMessage(result));
}
