import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type FanoutStack, range, Subscriber, startFanoutStack, until, updatesFrom } from "./fanout-stack.js";

const UPDATES = "/v2/updates";
const GET_UPDATES = "UpdateService/GetUpdates";

describe("shared update streams over real sockets", () => {
  let stack: FanoutStack;
  const more = (n: number) => stack.more(n);
  const joined = (how: "direct" | "splice") => stack.joins(UPDATES, how);

  before(async () => {
    stack = await startFanoutStack([], { ticks: 0 });
  });
  after(() => stack.stop());

  it("serves 100 subscribers of one request from exactly one ledger call, every element in order", async () => {
    const end = await stack.ledgerEnd();
    const startedBefore = stack.sandbox.calls.started(GET_UPDATES);
    const directBefore = await joined("direct");
    const subscribers = Array.from(
      { length: 100 },
      () => new Subscriber(stack, updatesFrom(stack.party, end)),
    );
    await until(async () => (await joined("direct")) - directBefore === 100);
    const seqs = await more(30);
    await Promise.all(subscribers.map((s) => s.received(30)));

    for (const s of subscribers) assert.deepEqual(s.seqs, seqs);
    // One open-ended call; the others are the joiners' empty-range admission probes, which end at
    // once with no element (joiners asking at the same time with the same token share one).
    assert.equal(stack.sandbox.calls.open(GET_UPDATES), 1);
    const probes = await stack.metric("ledger_gateway_fanout_admissions_total", {
      endpoint: UPDATES,
      outcome: "admitted",
    });
    assert.ok(probes >= 1 && probes <= 99);
    assert.equal(stack.sandbox.calls.started(GET_UPDATES) - startedBefore, 1 + probes);
    assert.equal(await stack.metric("ledger_gateway_fanout_upstreams", { endpoint: UPDATES }), 1);
    assert.equal(
      await stack.metric("ledger_gateway_fanout_subscribers", { endpoint: UPDATES, mode: "shared" }),
      100,
    );

    await Promise.all(subscribers.map((s) => s.close()));
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
    assert.equal(await stack.metric("ledger_gateway_fanout_upstreams", { endpoint: UPDATES }), 0);
    assert.equal(
      await stack.metric("ledger_gateway_fanout_upstream_closes_total", {
        endpoint: UPDATES,
        reason: "last_member_left",
      }),
      1,
    );
  });

  it("replays the history to a late joiner within it: no call of its own, no gap, no duplicate", async () => {
    const end = await stack.ledgerEnd();
    // One token for both (a token made in another second is another token, with a probe of its own).
    const token = stack.token();
    const first = new Subscriber(stack, updatesFrom(stack.party, end), token);
    await until(async () => stack.sandbox.calls.open(GET_UPDATES) === 1);
    const early = await more(15);
    await first.received(15);

    const catchUps = () =>
      stack.metric("ledger_gateway_fanout_catch_ups_total", { endpoint: UPDATES, cause: "late_join" });
    const catchUpsBefore = await catchUps();
    const directBefore = await joined("direct");
    const splicesBefore = await joined("splice");
    const startedBefore = stack.sandbox.calls.started(GET_UPDATES);
    // Its offset is 15 elements behind the shared call, well within the history (1 MiB).
    const late = new Subscriber(stack, updatesFrom(stack.party, end), token);
    await late.received(15);
    const after = await more(10);
    await Promise.all([first.received(25), late.received(25)]);

    const all = [...early, ...after];
    assert.deepEqual(late.seqs, all);
    assert.deepEqual(first.seqs, all);
    assert.deepEqual(late.offsets, first.offsets);
    assert.equal(new Set(late.offsets).size, late.offsets.length);
    assert.equal(await catchUps(), catchUpsBefore);
    assert.equal((await joined("direct")) - directBefore, 1);
    assert.equal(await joined("splice"), splicesBefore);
    // Its one ledger call is the empty-range admission probe (the first subscriber opened the
    // shared call: no admission of its to share); the shared call serves both.
    assert.equal(stack.sandbox.calls.started(GET_UPDATES) - startedBefore, 1);
    assert.equal(stack.sandbox.calls.open(GET_UPDATES), 1);
    await Promise.all([first.close(), late.close()]);
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
  });

  it("hands the call over to another member's token when its owner leaves, without a gap", async () => {
    const end = await stack.ledgerEnd();
    const owner = new Subscriber(stack, updatesFrom(stack.party, end), stack.token({ who: "owner" }));
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 1);
    const other = new Subscriber(stack, updatesFrom(stack.party, end), stack.token({ who: "other" }));
    const directBefore = await joined("direct");
    await until(
      async () => (await joined("direct")) > directBefore - 1 && stack.sandbox.calls.open(GET_UPDATES) === 1,
    );
    await until(
      async () =>
        (await stack.metric("ledger_gateway_fanout_subscribers", { endpoint: UPDATES, mode: "shared" })) ===
        2,
    );
    const handoversBefore = await stack.metric("ledger_gateway_fanout_handovers_total", {
      endpoint: UPDATES,
    });
    const before = await more(5);
    await Promise.all([owner.received(5), other.received(5)]);

    await owner.close();
    await until(
      async () =>
        (await stack.metric("ledger_gateway_fanout_handovers_total", { endpoint: UPDATES })) ===
        handoversBefore + 1,
    );
    const afterLeave = await more(5);
    await other.received(10);

    assert.deepEqual(owner.seqs, before);
    assert.deepEqual(other.seqs, [...before, ...afterLeave]);
    assert.equal(new Set(other.offsets).size, 10);
    assert.equal(stack.sandbox.calls.open(GET_UPDATES), 1);
    await other.close();
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
  });
});

describe("a crowd replaying from the ledger's begin", () => {
  const TICKS = 300;
  let stack: FanoutStack;

  before(async () => {
    stack = await startFanoutStack([], { ticks: TICKS });
  });
  after(() => stack.stop());

  it("shares one ledger call: joiners from offset 0 are admitted by a probe and replayed from the history, in order", async () => {
    const startedBefore = stack.sandbox.calls.started(GET_UPDATES);
    const first = new Subscriber(stack, updatesFrom(stack.party, 0));
    // Some joiners before the shared call read anything (an open-ended probe), some after
    // (the probe over (0, 1]).
    const early = Array.from({ length: 10 }, () => new Subscriber(stack, updatesFrom(stack.party, 0)));
    await first.received(1);
    const late = Array.from({ length: 10 }, () => new Subscriber(stack, updatesFrom(stack.party, 0)));
    await first.received(TICKS);
    // After the shared call read all of them: its history (1 MiB; 300 of these are 0.4 MiB)
    // still starts at offset 0.
    const last = Array.from({ length: 5 }, () => new Subscriber(stack, updatesFrom(stack.party, 0)));
    const crowd = [first, ...early, ...late, ...last];
    await Promise.all(crowd.map((s) => s.received(TICKS)));

    for (const s of crowd) {
      assert.deepEqual(s.seqs, first.seqs);
      assert.equal(new Set(s.offsets).size, TICKS);
    }
    assert.deepEqual(first.seqs, range(1, TICKS));
    assert.equal(
      await stack.metric("ledger_gateway_fanout_catch_ups_total", { endpoint: UPDATES, cause: "late_join" }),
      0,
    );
    // One shared call; the rest are admission probes (one per question in flight: same token).
    const probes = await stack.metric("ledger_gateway_fanout_admissions_total", {
      endpoint: UPDATES,
      outcome: "admitted",
    });
    assert.ok(probes >= 1 && probes <= 25);
    assert.equal(stack.sandbox.calls.started(GET_UPDATES) - startedBefore, 1 + probes);
    assert.equal(stack.sandbox.calls.open(GET_UPDATES), 1);
    await Promise.all(crowd.map((s) => s.close()));
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
  });
});

describe("a late joiner beyond the shared stream's history", () => {
  let stack: FanoutStack;
  const more = (n: number) => stack.more(n);
  const joined = (how: "direct" | "splice") => stack.joins(UPDATES, how);

  before(async () => {
    // A history of 6,000 bytes, 4 of these 1.3 KB ticks: a joiner 15 behind is beyond it.
    stack = await startFanoutStack(["--websocket-config.fanout-history-bytes", "6000"], { ticks: 0 });
  });
  after(() => stack.stop());

  it("lets a late joiner catch up on a call and move to the shared one by offset: no gap, no duplicate", async () => {
    const end = await stack.ledgerEnd();
    const first = new Subscriber(stack, updatesFrom(stack.party, end));
    await until(async () => stack.sandbox.calls.open(GET_UPDATES) === 1);
    const early = await more(15);
    await first.received(15);

    const splicesBefore = await joined("splice");
    const late = new Subscriber(stack, updatesFrom(stack.party, end));
    // New elements while the late joiner is still behind: it moves once the history covers it.
    const during = await more(10);
    await until(async () => (await joined("splice")) - splicesBefore === 1);
    const after = await more(10);
    await Promise.all([first.received(35), late.received(35)]);

    const all = [...early, ...during, ...after];
    assert.deepEqual(late.seqs, all);
    assert.deepEqual(first.seqs, all);
    assert.deepEqual(late.offsets, first.offsets);
    assert.equal(new Set(late.offsets).size, late.offsets.length);
    assert.ok(
      (await stack.metric("ledger_gateway_fanout_catch_ups_total", {
        endpoint: UPDATES,
        cause: "late_join",
      })) >= 1,
    );
    // Spliced: its own call is gone, one call serves both.
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 1);
    await Promise.all([first.close(), late.close()]);
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
  });

  it("gives late joiners from the same offset one catch-up call between them, then the shared one", async () => {
    const end = await stack.ledgerEnd();
    const token = stack.token();
    const first = new Subscriber(stack, updatesFrom(stack.party, end), token);
    await until(async () => stack.sandbox.calls.open(GET_UPDATES) === 1);
    const early = await more(15);
    await first.received(15);

    const lateJoins = () =>
      stack.metric("ledger_gateway_fanout_catch_ups_total", { endpoint: UPDATES, cause: "late_join" });
    const probes = () =>
      stack.metric("ledger_gateway_fanout_admissions_total", { endpoint: UPDATES, outcome: "admitted" });
    const lateJoinsBefore = await lateJoins();
    const probesBefore = await probes();
    const splicesBefore = await joined("splice");
    const late = Array.from({ length: 5 }, () => new Subscriber(stack, updatesFrom(stack.party, end), token));
    await until(async () => (await joined("splice")) - splicesBefore === 5);
    const after = await more(5);
    await Promise.all([first, ...late].map((s) => s.received(20)));

    for (const s of late) assert.deepEqual(s.seqs, [...early, ...after]);
    // Joiners admitted together share a catch-up call; one admitted after that call read past the
    // history starts another. One probe for the five: those asking while it is in flight share
    // it, those after it its yes (same token, request and offset, younger than the re-check
    // interval), so all five join within a round trip of their sockets' arrival.
    const catchUps = (await lateJoins()) - lateJoinsBefore;
    assert.equal((await probes()) - probesBefore, 1);
    assert.ok(catchUps >= 1 && catchUps <= 2, `${catchUps} catch-up calls`);
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 1);
    await Promise.all([first, ...late].map((s) => s.close()));
    await until(() => stack.sandbox.calls.open(GET_UPDATES) === 0);
  });
});

describe("a slow subscriber of a shared stream", () => {
  // 12 MiB: more than the kernel's socket buffers, the high-water mark and the history's lag
  // allowance can hold for a reader that stopped.
  const TICKS = 1500;
  let stack: FanoutStack;

  before(async () => {
    stack = await startFanoutStack(
      [
        "--websocket-config.high-water-mark",
        String(64 * 1024),
        "--websocket-config.low-water-mark",
        String(16 * 1024),
        // A lagging member is replayed from the history while it covers it (160 KiB, some 17 of
        // these elements, and up to the hard limit's bytes while a member lags: 55 of them): a
        // reader that stopped falls further behind, so that it is detached.
        "--websocket-config.fanout-history-bytes",
        String(160 * 1024),
        "--websocket-config.hard-limit",
        String(512 * 1024),
      ],
      { ticks: TICKS, payloadBytes: 8 * 1024 },
    );
  });
  after(() => stack.stop());

  it("is detached onto its own call and still gets everything, while the others read on to the end", async () => {
    const begin = (stack.sandbox.preloaded?.firstOffset ?? 1) - 1;
    const detachesBefore = await stack.metric("ledger_gateway_fanout_detaches_total", { endpoint: UPDATES });
    // The slow reader opens the shared call and stops reading (alone, it holds the call back: the
    // call pauses); fast readers join, catch up and splice in; from then on it is in their way.
    const slow = new Subscriber(stack, updatesFrom(stack.party, begin));
    await slow.received(20);
    slow.stopReading();
    const fast = range(1, 3).map(() => new Subscriber(stack, updatesFrom(stack.party, begin)));
    // The others get everything while it reads nothing: it never held them back.
    await Promise.all(fast.map((s) => s.received(TICKS)));
    assert.ok(slow.seqs.length < TICKS);
    assert.ok(
      (await stack.metric("ledger_gateway_fanout_detaches_total", { endpoint: UPDATES })) > detachesBefore,
      "the slow subscriber was detached",
    );
    slow.resume();
    await slow.received(TICKS);

    const all = range(1, TICKS);
    for (const s of fast) assert.deepEqual(s.seqs, all);
    assert.deepEqual(slow.seqs, all);
    assert.equal(new Set(slow.offsets).size, TICKS);
    await Promise.all([...fast, slow].map((s) => s.close()));
  });
});
