import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BehaviorSubject, Observable, Subject, type Subscription } from "rxjs";
import { SharedStreams } from "../../src/fanout/shared-streams.js";
import type {
  FanoutEvents,
  MemberRequest,
  ShareSpec,
  UpstreamSource,
} from "../../src/fanout/subscription.js";
import { until } from "../support/until.js";

/**
 * SharedStream against a fake ledger: every call the fan-out opens is recorded (its offset, its
 * token, its demand) and the test emits its elements by hand, so that each rule (history,
 * lag, detach, splice, pause, handover) is exercised exactly, with no timing.
 */

/** An element of the fake ledger: its offset, and whether it is a checkpoint. */
/** 8 bytes each (offsets below 1000), so that a history's bytes say how many it holds. */
const tx = (offset: number) => JSON.stringify({ o: offset }).padEnd(8);
/** 16 bytes. */
const checkpoint = (offset: number) => JSON.stringify({ o: offset, c: true }).padEnd(16);

interface Call {
  readonly from: number;
  readonly token: string | undefined;
  /** The call's demand as the fan-out last set it. */
  demand: boolean;
  cancelled: boolean;
  emit(...elements: string[]): void;
  complete(): void;
  /** The ledger ends the call with `error`. */
  fail(error: unknown): void;
}

class FakeLedger implements UpstreamSource {
  readonly calls: Call[] = [];

  open(request: unknown, token: string | undefined, demand$: Observable<boolean>): Observable<string> {
    return new Observable<string>((subscriber) => {
      const call: Call = {
        from: (request as { from: number }).from,
        token,
        demand: true,
        cancelled: false,
        emit: (...elements) => {
          for (const element of elements) if (!call.cancelled) subscriber.next(element);
        },
        complete: () => subscriber.complete(),
        fail: (error) => subscriber.error(error),
      };
      this.calls.push(call);
      const demand = demand$.subscribe((ready) => {
        call.demand = ready;
      });
      return () => {
        call.cancelled = true;
        demand.unsubscribe();
      };
    });
  }

  offsetOf(element: string): number | undefined {
    return (JSON.parse(element) as { o: number }).o;
  }

  isCheckpoint(element: string): boolean {
    return (JSON.parse(element) as { c?: boolean }).c === true;
  }

  isTokenRefusal(error: unknown): boolean {
    return [7, 16].includes((error as { code?: number }).code ?? 0);
  }

  /** `expires-<epoch ms>` expires then; any other token never. */
  expiryOf(token: string | undefined): number | undefined {
    const at = /^expires-(\d+)$/.exec(token ?? "")?.[1];
    return at === undefined ? undefined : Number(at);
  }

  /** Calls not cancelled. */
  open$(): Call[] {
    return this.calls.filter((c) => !c.cancelled);
  }
}

/** An admission the test answers when it wants. */
class Admission {
  asked = 0;
  #answers: ((askedAt: number | undefined) => void)[] = [];

  admit = (): Promise<number | undefined> => {
    this.asked += 1;
    return new Promise((resolve) => this.#answers.push(resolve));
  };

  /** Admits everyone asked so far; resolves once their joins ran. */
  async answerAll(): Promise<void> {
    for (const answer of this.#answers.splice(0)) answer(Date.now());
    await settle();
  }

  /** Leaves everyone asked so far without an answer (their deadline passed); resolves once their joins ran. */
  async timeOutAll(): Promise<void> {
    for (const answer of this.#answers.splice(0)) answer(undefined);
    await settle();
  }
}

/** Lets promise callbacks and setImmediate callbacks (a scheduled handover) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

interface TestMember {
  readonly received: number[];
  readonly demand: BehaviorSubject<boolean>;
  readonly subscription: Subscription;
  error: unknown;
  completed: boolean;
}

function fixture(options: {
  /** Bytes of the history: 8 per transaction, 16 per checkpoint. */
  historyBytes: number;
  lagBytes?: number;
  admission?: Admission;
  rotateBeforeExpiryMs?: number;
}) {
  const ledger = new FakeLedger();
  const counts: Record<string, number> = {};
  const count =
    (name: string) =>
    (..._args: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
    };
  const events: FanoutEvents = {
    upstreamOpened: count("opened"),
    handover: count("handover"),
    detached: count("detached"),
    catchUp: (_e, cause) => count(`catchUp:${cause}`)(),
    joined: (_e, how) => count(`joined:${how}`)(),
    rotated: (_e, cause) => count(`rotated:${cause}`)(),
  };
  const fanout = new SharedStreams({
    historyBytes: options.historyBytes,
    // The configuration's default, websocket-config.hard-limit, unless the test sets it.
    lagBytes: options.lagBytes ?? 16 * 1024 * 1024,
    // What src/ws/ws-streams.ts passes, unless the test sets it.
    catchUpBuffer: 4096,
    rotateBeforeExpiryMs: options.rotateBeforeExpiryMs ?? 10_000,
    events,
  });
  const join = (begin: number, token = "t", renewed$?: Observable<string>): TestMember => {
    const demand = new BehaviorSubject(true);
    const share: ShareSpec = {
      key: "k",
      begin,
      from: (offset) => ({ from: offset }),
      // Admitted at once unless the test answers the admissions itself.
      admit: options.admission?.admit ?? (() => Promise.resolve(Date.now())),
    };
    const request: MemberRequest = {
      endpoint: "/e",
      share,
      source: ledger,
      token,
      demand$: demand,
      ...(renewed$ ? { renewed$ } : {}),
    };
    const member: TestMember = {
      received: [],
      demand,
      error: undefined,
      completed: false,
      subscription: undefined as unknown as Subscription,
    };
    (member as { subscription: Subscription }).subscription = fanout.open(request).subscribe({
      next: (text) => member.received.push(ledger.offsetOf(text) as number),
      error: (error: unknown) => {
        member.error = error;
      },
      complete: () => {
        member.completed = true;
      },
    });
    return member;
  };
  return { ledger, fanout, counts, join };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const txs = (from: number, to: number) => range(from, to).map(tx);

describe("SharedStream", () => {
  it("shares one call among subscribers from the same offset whose admission comes after the history moved on", async () => {
    const admission = new Admission();
    const { ledger, join, counts } = fixture({ historyBytes: 2 * 8, admission });
    const first = join(10, "first");
    const others = range(1, 9).map((i) => join(10, `token-${i}`));
    assert.equal(admission.asked, 9, "one admission per token");
    // The shared call runs far past the history (2) while the ledger is asked.
    ledger.calls[0]?.emit(...txs(11, 60));
    await admission.answerAll();
    ledger.calls[0]?.emit(...txs(61, 70));

    assert.equal(ledger.calls.length, 1, "one call: no catch-up of its own for anyone");
    for (const member of [first, ...others]) assert.deepEqual(member.received, range(11, 70));
    assert.equal(counts["joined:direct"], 10);
    assert.equal(counts["catchUp:late_join"], undefined);
  });

  it("shares one catch-up call among admitted joiners behind the history, and hands them to the shared call once its history covers them", async () => {
    const admission = new Admission();
    // 2 elements' bytes: the joiners are behind it, so nothing is held for their admission.
    const { ledger, join, fanout, counts } = fixture({ historyBytes: 2 * 8, lagBytes: 1000, admission });
    const first = join(10, "first");
    const main = ledger.calls[0] as Call;
    main.emit(...txs(11, 30));
    const behind = range(1, 3).map((i) => join(12, `behind-${i}`));
    await admission.answerAll();
    assert.equal(ledger.calls.length, 2, "one catch-up call for the three");
    const catchUp = ledger.calls[1] as Call;
    assert.equal(catchUp.from, 12);
    assert.equal(catchUp.token, "behind-1");
    assert.equal(counts["catchUp:late_join"], 1);
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 1, catching_up: 0, own: 0 });

    // From before where that catch-up started: a catch-up of its own.
    const earlier = join(5, "earlier");
    await admission.answerAll();
    assert.equal(ledger.calls.length, 3);
    assert.equal((ledger.calls[2] as Call).from, 5);
    assert.equal(counts["catchUp:late_join"], 2);

    catchUp.emit(...txs(13, 27));
    for (const member of behind) assert.deepEqual(member.received, range(13, 27));
    assert.equal(catchUp.cancelled, false, "27: the shared history (29, 30) does not cover it yet");
    catchUp.emit(tx(28));
    assert.equal(catchUp.cancelled, true, "28: covered, all three moved to the shared call");
    for (const member of behind) assert.deepEqual(member.received, range(13, 30), "and were replayed 29, 30");
    assert.equal(counts["joined:splice"], 3);
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 4, catching_up: 0, own: 0 });

    main.emit(tx(31));
    for (const member of [first, ...behind]) assert.deepEqual(member.received.slice(-2), [30, 31]);
    assert.deepEqual(earlier.received, [], "still on its catch-up");
    // A member that moved leaves the shared call when its subscriber goes.
    behind[0]?.subscription.unsubscribe();
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 3, catching_up: 0, own: 0 });
    assert.equal(ledger.open$().length, 2, "the shared call and the earlier joiner's catch-up");
  });

  it("holds a running catch-up call's elements for a joiner being admitted from where it started", async () => {
    const admission = new Admission();
    const { ledger, join, counts } = fixture({ historyBytes: 2 * 8, lagBytes: 1000, admission });
    join(10, "first");
    const main = ledger.calls[0] as Call;
    main.emit(...txs(11, 30));
    const a = join(12, "a");
    await admission.answerAll();
    const catchUp = ledger.calls[1] as Call;
    const b = join(12, "b");
    // The catch-up call reads past its history (2 elements) while b's admission is asked.
    catchUp.emit(...txs(13, 20));
    await admission.answerAll();
    assert.equal(ledger.calls.length, 2, "b joined the running catch-up call");
    assert.deepEqual(b.received, range(13, 20));
    catchUp.emit(...txs(21, 28));
    for (const member of [a, b]) assert.deepEqual(member.received, range(13, 30));
    assert.equal(counts["catchUp:late_join"], 1);
    assert.equal(catchUp.cancelled, true);
  });

  it("asks the ledger once for subscribers that ask the same at the same time, and again later", async () => {
    const admission = new Admission();
    const { ledger, join } = fixture({ historyBytes: 10 * 8, admission });
    join(0, "same");
    const twins = range(1, 5).map(() => join(0, "same"));
    const other = join(0, "other");
    assert.equal(admission.asked, 2, "one probe for the five with the same token, one for the other");
    await admission.answerAll();
    ledger.calls[0]?.emit(...txs(1, 3));
    for (const member of [...twins, other]) assert.deepEqual(member.received, range(1, 3));

    join(0, "same");
    assert.equal(admission.asked, 3, "an answer is not remembered: a later subscriber asks again");
  });

  it("keeps the stream for subscribers being admitted when every member left meanwhile", async () => {
    const admission = new Admission();
    const { ledger, join, counts } = fixture({ historyBytes: 2 * 8, admission });
    const first = join(10, "first");
    const others = range(1, 3).map((i) => join(10, `other-${i}`));
    const shared = ledger.calls[0] as Call;
    shared.emit(...txs(11, 30));
    // The first reads to the end and leaves before the ledger answered for the others.
    first.subscription.unsubscribe();
    await settle();
    assert.equal(shared.cancelled, true);
    await admission.answerAll();

    assert.equal(counts["catchUp:late_join"], undefined, "no call of their own");
    assert.equal(ledger.calls.length, 2, "the shared call resumed once, on an admitted token");
    const resumed = ledger.calls[1] as Call;
    assert.equal(resumed.from, 30);
    assert.notEqual(resumed.token, "first");
    resumed.emit(...txs(31, 32));
    for (const member of others) assert.deepEqual(member.received, range(11, 32));
    assert.deepEqual(first.received, range(11, 30));
  });

  it("replays the history to a lagging member when it drains: no call of its own, no gap, no duplicate", async () => {
    // A history of 2 elements' bytes, which keeps up to 1000 bytes while a member lags.
    const { ledger, join, counts } = fixture({ historyBytes: 2 * 8, lagBytes: 1000 });
    const fast = join(0);
    const slow = join(0);
    await settle();
    const shared = ledger.calls[0] as Call;
    shared.emit(...txs(1, 3));
    slow.demand.next(false);
    shared.emit(...txs(4, 7));
    assert.deepEqual(slow.received, range(1, 3), "skipped while over its high-water mark");
    assert.equal(shared.demand, true, "the others go on");
    slow.demand.next(true);
    shared.emit(...txs(8, 9));

    assert.deepEqual(slow.received, range(1, 9));
    assert.deepEqual(fast.received, range(1, 9));
    assert.equal(ledger.calls.length, 1);
    assert.equal(counts.detached, undefined);
  });

  it("replays the history 256 KiB per turn, going on while the member's socket is ready and after it drains", async () => {
    const big = (offset: number) => JSON.stringify({ o: offset }).padEnd(64 * 1024);
    const admission = new Admission();
    const { ledger, join } = fixture({ historyBytes: 1024 * 1024, admission });
    const first = join(0);
    const shared = ledger.calls[0] as Call;
    shared.emit(...range(1, 10).map(big));
    const late = join(0);
    await admission.answerAll();
    assert.deepEqual(late.received, range(1, 4), "the first turn: 4 elements of 64 KiB");
    shared.emit(big(11));
    assert.deepEqual(late.received, range(1, 4), "the shared element waits for the replay");

    late.demand.next(false);
    await settle();
    await settle();
    assert.deepEqual(late.received, range(1, 4), "its socket is full: nothing more");
    late.demand.next(true);
    assert.deepEqual(late.received, range(1, 8), "drained: the next turn's worth at once");
    await settle();
    await settle();
    assert.deepEqual(late.received, range(1, 11));
    shared.emit(big(12));
    assert.deepEqual(late.received, range(1, 12), "replayed: shared elements as they come");
    assert.deepEqual(first.received, range(1, 12));
    assert.equal(ledger.calls.length, 1);
  });

  it("detaches a member the history no longer covers onto its own call, and splices it back in when it drains", async () => {
    // 3 elements' bytes, and 48 bytes while a member lags: 3 more of these 8-byte elements.
    const { ledger, join, fanout, counts } = fixture({ historyBytes: 3 * 8, lagBytes: 6 * 8 });
    const fast = join(0);
    const slow = join(0);
    await settle();
    const shared = ledger.calls[0] as Call;
    shared.emit(...txs(1, 2));
    slow.demand.next(false);
    shared.emit(...txs(3, 8));
    assert.equal(ledger.calls.length, 1, "6 behind: the history keeps them for it");
    shared.emit(tx(9));

    assert.equal(counts.detached, 1);
    const own = ledger.calls[1] as Call;
    assert.equal(own.from, 2, "its own call starts after its last delivered offset");
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 1, catching_up: 0, own: 1 });
    own.emit(...txs(3, 4));
    shared.emit(tx(10));
    assert.deepEqual(fast.received, range(1, 10));

    // It drains: registered for a splice at the shared position (10), while its call reads on.
    slow.demand.next(true);
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 1, catching_up: 1, own: 0 });
    shared.emit(tx(11));
    own.emit(...txs(5, 10));
    assert.equal(own.cancelled, true, "its own call reached the shared position: spliced");
    shared.emit(tx(12));

    assert.deepEqual(slow.received, range(1, 12));
    assert.deepEqual(fast.received, range(1, 12));
    assert.equal(counts["joined:splice"], 1);
    assert.deepEqual(fanout.stream("k")?.members(), { shared: 2, catching_up: 0, own: 0 });
  });

  it("keeps the hard limit's bytes for each lagging member: a crowd that lags by turns stays on the shared call", async () => {
    // 3 elements' bytes, 48 more while one member lags (6 elements), 96 while two do.
    const { ledger, join, counts } = fixture({ historyBytes: 3 * 8, lagBytes: 6 * 8 });
    const fast = join(0);
    const slow = join(0);
    const slower = join(0);
    await settle();
    const shared = ledger.calls[0] as Call;
    shared.emit(...txs(1, 2));
    slower.demand.next(false);
    shared.emit(...txs(3, 4));
    slow.demand.next(false);
    // 10 behind the slower one, past one member's 6 but within two members' 12.
    shared.emit(...txs(5, 12));
    assert.equal(counts.detached, undefined, "no call of its own for either");
    slower.demand.next(true);
    slow.demand.next(true);
    // Replayed a quarter of the hard limit per turn.
    for (let turn = 0; turn < 12; turn += 1) await settle();
    shared.emit(tx(13));

    assert.equal(ledger.calls.length, 1);
    for (const member of [fast, slow, slower]) assert.deepEqual(member.received, range(1, 13));
  });

  it("pauses the shared call only when every member is slow", async () => {
    const { ledger, join } = fixture({ historyBytes: 100 * 8 });
    const a = join(0);
    const b = join(0);
    await settle();
    const shared = ledger.calls[0] as Call;
    a.demand.next(false);
    assert.equal(shared.demand, true, "one slow member never holds the other back");
    b.demand.next(false);
    assert.equal(shared.demand, false, "all slow: the call pauses");
    a.demand.next(true);
    assert.equal(shared.demand, true);
    assert.equal(ledger.calls.length, 1);
  });

  it("replays the history to an admitted late joiner only when it covers the joiner's offset, checkpoints included", async () => {
    const admission = new Admission();
    const { ledger, join, counts } = fixture({ historyBytes: 32, lagBytes: 1000, admission });
    const first = join(0);
    const shared = ledger.calls[0] as Call;
    // The checkpoint at 2 carries the offset of the transaction before it.
    shared.emit(tx(1), tx(2), checkpoint(2), tx(3), tx(4));
    // The history (32 bytes) holds checkpoint(2), 3, 4: it begins after offset 2, whose checkpoint it has.
    const at2 = join(2);
    await admission.answerAll();
    assert.deepEqual(at2.received, [2, 3, 4], "the checkpoint at its offset, then 3 and 4");
    assert.equal(ledger.calls.length, 1);

    shared.emit(tx(5));
    // Now it holds 3, 4, 5: the checkpoint at 2 left it, so a joiner at 2 would miss it.
    const late = join(2);
    await admission.answerAll();
    assert.equal(counts["catchUp:late_join"], 1, "not covered: it catches up on its own call");
    const own = ledger.calls[1] as Call;
    assert.equal(own.from, 2);
    own.emit(checkpoint(2), tx(3), tx(4), tx(5));
    shared.emit(tx(6));
    assert.deepEqual(late.received, [2, 3, 4, 5, 6]);
    assert.deepEqual(first.received, [1, 2, 2, 3, 4, 5, 6]);
  });

  it("hands the call over once to another member's token when its owner leaves, without a gap", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8 });
    const owner = join(0, "owner");
    const a = join(0, "a");
    const b = join(0, "b");
    await settle();
    const first = ledger.calls[0] as Call;
    assert.equal(first.token, "owner");
    first.emit(...txs(1, 3));
    owner.subscription.unsubscribe();
    assert.equal(first.cancelled, true, "the owner's token stops at once");
    await settle();

    assert.equal(counts.handover, 1);
    const second = ledger.calls[1] as Call;
    assert.equal(second.from, 3, "reopened from the shared position");
    assert.equal(second.token, "b", "on the newest member's token");
    second.emit(...txs(4, 5));
    assert.deepEqual(a.received, range(1, 5));
    assert.deepEqual(b.received, range(1, 5));

    // Members that leave in one turn cost no reopen when they were the last.
    a.subscription.unsubscribe();
    b.subscription.unsubscribe();
    await settle();
    assert.equal(ledger.calls.length, 2);
    assert.equal(ledger.open$().length, 0);
  });

  /** The fake ledger's refusal of a token (PERMISSION_DENIED), and a failure that says nothing about it. */
  const refusal = { code: 7, message: "refused" };
  const unavailable = { code: 14, message: "unavailable" };

  it("ends the owner and every member on the owner's token when the ledger refuses it, and moves the call onto another member's token without a gap", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8 });
    const owner = join(0, "revoked");
    const sameToken = join(0, "revoked");
    const kept = join(0, "kept");
    const alsoKept = join(0, "also-kept");
    await settle();
    const first = ledger.calls[0] as Call;
    assert.equal(first.token, "revoked");
    first.emit(...txs(1, 3));
    first.fail(refusal);

    for (const member of [owner, sameToken]) {
      assert.equal(member.error, refusal, "the ledger's own error");
      assert.deepEqual(member.received, range(1, 3));
    }
    await settle();
    assert.equal(counts.handover, 1);
    assert.equal(ledger.calls.length, 2, "one reopen");
    const second = ledger.calls[1] as Call;
    assert.deepEqual({ from: second.from, token: second.token }, { from: 3, token: "also-kept" });
    second.emit(...txs(4, 5));
    for (const member of [kept, alsoKept]) {
      assert.equal(member.error, undefined);
      assert.deepEqual(member.received, range(1, 5));
    }
  });

  it("moves the call again when the next owner's token is refused in turn, and ends the stream when no other token is left", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8 });
    const a = join(0, "a");
    const b = join(0, "b");
    const c = join(0, "c");
    await settle();
    (ledger.calls[0] as Call).emit(...txs(1, 2));
    (ledger.calls[0] as Call).fail(refusal);
    await settle();
    const second = ledger.calls[1] as Call;
    assert.deepEqual({ from: second.from, token: second.token }, { from: 2, token: "c" });
    second.emit(tx(3));
    second.fail(refusal);
    await settle();
    const third = ledger.calls[2] as Call;
    assert.deepEqual({ from: third.from, token: third.token }, { from: 3, token: "b" });
    third.emit(tx(4));
    assert.equal(counts.handover, 2);
    assert.deepEqual([a.received, c.received, b.received], [range(1, 2), range(1, 3), range(1, 4)]);
    assert.deepEqual([a.error, c.error, b.error], [refusal, refusal, undefined]);

    // The last token refused: nobody to move to, the stream ends as for any failure.
    third.fail(refusal);
    await settle();
    assert.equal(b.error, refusal);
    assert.equal(ledger.calls.length, 3);
    assert.equal(counts.handover, 2);
  });

  it("ends every member when the call fails for another reason than its token", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8 });
    const members = [join(0, "a"), join(0, "b")];
    await settle();
    (ledger.calls[0] as Call).emit(tx(1));
    (ledger.calls[0] as Call).fail(unavailable);
    await settle();
    for (const member of members) assert.equal(member.error, unavailable);
    assert.equal(ledger.calls.length, 1);
    assert.equal(counts.handover, undefined);
  });

  it("moves the shared call onto the token that expires last shortly before its owner's expires", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8, rotateBeforeExpiryMs: 10_000 });
    const soon = `expires-${Date.now() + 10_200}`;
    const owner = join(0, soon);
    const never = join(0, "never");
    const later = join(0, `expires-${Date.now() + 60_000}`);
    await settle();
    const first = ledger.calls[0] as Call;
    first.emit(...txs(1, 3));
    assert.equal(ledger.calls.length, 1, "the owner's token is good for 10.2 s yet");

    // 200 ms later the owner's token is within 10 s of its expiry: the call moves to the token
    // that never expires (later than any `exp`), from the shared position.
    await until(() => ledger.calls.length === 2);
    const second = ledger.calls[1] as Call;
    assert.equal(first.cancelled, true);
    assert.deepEqual({ from: second.from, token: second.token }, { from: 3, token: "never" });
    assert.equal(counts["rotated:expiry"], 1);
    second.emit(...txs(4, 5));
    for (const member of [owner, never, later]) assert.deepEqual(member.received, range(1, 5));
  });

  it("stays on its owner's token when no member's expires later", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 10 * 8, rotateBeforeExpiryMs: 10_000 });
    join(0, `expires-${Date.now() + 10_100}`);
    join(0, `expires-${Date.now() + 5_000}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(ledger.calls.length, 1);
    assert.equal(counts["rotated:expiry"], undefined);
  });

  it("moves the shared call onto its owner's renewed token, and a member's renewal onto its own call", async () => {
    const { ledger, join, counts } = fixture({ historyBytes: 0 });
    const renewals = new Subject<string>();
    const owner = join(0, "owner-1", renewals);
    const other = join(0, "other");
    await settle();
    const first = ledger.calls[0] as Call;
    first.emit(...txs(1, 2));
    renewals.next("owner-2");
    const second = ledger.calls[1] as Call;
    assert.equal(first.cancelled, true);
    assert.deepEqual({ from: second.from, token: second.token }, { from: 2, token: "owner-2" });
    assert.equal(counts["rotated:renewal"], 1);
    second.emit(...txs(2, 4));
    for (const member of [owner, other]) assert.deepEqual(member.received, range(1, 4));
  });
});
