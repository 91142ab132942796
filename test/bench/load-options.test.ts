import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { ArrivalSchedule } from "../../bench/load/arrivals.js";
import { loadOptions, parseStages, type RawOptions } from "../../bench/load/load-options.js";
import { isEmbeddedSandbox } from "../../bench/load/prepare.js";
import { ReassignmentPool } from "../../bench/load/reassignment-pool.js";
import { judge, parseThreshold } from "../../bench/load/thresholds.js";
import { tokenExpiry } from "../../bench/load/token-source.js";
import { UsageError } from "../../bench/load/usage-error.js";

const raw = (over: Partial<RawOptions> = {}): RawOptions => ({
  url: "http://127.0.0.1:7575",
  "token-file": "t",
  scenario: "submit-and-wait,updates",
  subscribers: "10",
  duration: "60s",
  "warm-up": "5s",
  interval: "5s",
  out: "out",
  connections: "64",
  "acs-contracts": "100",
  "reassignment-contracts": "64",
  ...over,
});

describe("the load tool's options", () => {
  it("reads a fixed rate, the scenarios and the subscribers", () => {
    const options = loadOptions(raw({ rate: "500/s", scenario: "reads,submit-and-wait,updates" }));
    assert.deepEqual(options.model, {
      kind: "open",
      stages: [{ durationMs: 60_000, rate: 500 }],
      startRate: 500,
    });
    assert.deepEqual(options.requests, ["submit-and-wait", "reads"]);
    assert.equal(options.subscribers, 10);
    assert.equal(options.warmUpMs, 5000);
  });

  it("reads stages as a ramp whose duration is their sum, and a closed model", () => {
    assert.deepEqual(parseStages("10s:100/s,30s:30000/m"), [
      { durationMs: 10_000, rate: 100 },
      { durationMs: 30_000, rate: 500 },
    ]);
    assert.equal(loadOptions(raw({ stages: "10s:100/s,1m:500/s" })).durationMs, 70_000);
    assert.deepEqual(loadOptions(raw({ concurrency: "16" })).model, { kind: "closed", concurrency: 16 });
  });

  it("gives --subscribers N to each stream scenario of the run, or a count of its own", () => {
    const streams = "submit-async,updates-list,updates,completions-stream,acs-stream";
    const each = loadOptions(raw({ scenario: streams, subscribers: "100" }));
    assert.deepEqual(each.requests, ["submit-async", "updates-list"]);
    assert.deepEqual([each.subscribers, each.completionSubscribers, each.acsReaders], [100, 100, 100]);
    const own = loadOptions(raw({ scenario: streams, subscribers: "100,acs-stream=4" }));
    assert.deepEqual([own.subscribers, own.completionSubscribers, own.acsReaders], [100, 100, 4]);
    const named = loadOptions(raw({ scenario: streams, subscribers: "completions-stream=7" }));
    assert.deepEqual([named.subscribers, named.completionSubscribers, named.acsReaders], [10, 7, 10]);
    const notNamed = loadOptions(raw({ scenario: "submit-and-wait,acs-stream", subscribers: "5" }));
    assert.deepEqual([notNamed.subscribers, notNamed.completionSubscribers, notNamed.acsReaders], [0, 0, 5]);
    assert.equal(
      loadOptions(raw({ scenario: "reads", subscribers: "0" })).subscribers,
      0,
      "no streams: not read",
    );
  });

  it("runs acs-stream alone, and reads the new series' thresholds", () => {
    const alone = loadOptions(raw({ scenario: "acs-stream", subscribers: "2" }));
    assert.deepEqual(alone.requests, []);
    assert.equal(alone.acsReaders, 2);
    const options = loadOptions(
      raw({
        scenario: "submit-and-wait,updates-list,completions-stream,acs-stream",
        threshold: ["completions-stream.p99<100ms", "acs-stream.p99<1s", "updates-list.errors<1"],
      }),
    );
    assert.deepEqual(
      options.thresholds.map((t) => t.scenario),
      ["completions-stream", "acs-stream", "updates-list"],
    );
  });

  it("refuses what it cannot run with a message naming the flag", () => {
    const refused = (over: Partial<RawOptions>, message: RegExp) =>
      assert.throws(
        () => loadOptions(raw(over)),
        (error: Error) => error instanceof UsageError && message.test(error.message),
      );
    refused({ rate: "fast" }, /--rate takes a rate above 0 .* got 'fast'/);
    refused({ rate: "0/s" }, /--rate takes a rate above 0/);
    refused({ duration: "10" }, /--duration takes a duration such as/);
    refused({ scenario: "submit-and-wait,nope" }, /unknown scenario nope; known: submit-and-wait, /);
    refused({ scenario: "updates" }, /needs a request scenario/);
    refused({ scenario: "acs-stream,completions-stream" }, /needs a request scenario/);
    refused({ scenario: "reads,completions-stream" }, /completions-stream needs a command scenario/);
    refused({ subscribers: "10,acs=2" }, /--subscribers takes N or N,SCENARIO=N/);
    refused({ subscribers: "10,20" }, /--subscribers has two counts for every stream scenario/);
    refused({ subscribers: "acs-stream=0" }, /--subscribers acs-stream= takes a whole number of at least 1/);
    refused(
      { scenario: "submit-async,acs-stream", threshold: ["completions-stream.p99<1s"] },
      /reads completions-stream, which this run does not have \(it has submit-async, completions, acs-stream\)/,
    );
    refused({ rate: "10/s", concurrency: "2" }, /one of --rate, --stages or --concurrency/);
    refused({ "token-command": "x" }, /one of --token-file FILE or --token-command/);
    refused({ url: "ftp://x" }, /--url takes an http\(s\) URL/);
    refused({ url: undefined }, /--url is required/);
    refused({ stages: "10s" }, /--stages takes DURATION:RATE/);
    refused({ template: "#p:M:T" }, /--template needs --create-arguments/);
    refused({ template: "#p:M:T", "create-arguments": "{" }, /--create-arguments is not JSON/);
    refused({ threshold: ["p99 < fast"] }, /--threshold 'p99 < fast' is not/);
    refused({ threshold: ["p99<50"] }, /a latency needs a unit/);
    refused(
      { threshold: ["acs.p99<50ms"] },
      /reads acs, which this run does not have \(it has submit-and-wait, updates\)/,
    );
    assert.equal(loadOptions(raw({ threshold: ["updates.p99<1s", "p99<50ms"] })).thresholds.length, 2);
  });
});

describe("thresholds", () => {
  const figures = {
    requests: 990,
    errors: 10,
    ratePerSecond: 198,
    latencyMs: { p50: 2, p90: 5, p99: 40, "p99.9": 80, max: 90, mean: 3 },
  };

  it("reads a scenario, a metric, an operator and a value in its unit", () => {
    assert.deepEqual(parseThreshold("submit-and-wait.p99.9<=0.2s"), {
      text: "submit-and-wait.p99.9<=0.2s",
      scenario: "submit-and-wait",
      metric: "p99.9",
      op: "<=",
      value: 200,
      percent: false,
    });
    assert.equal(parseThreshold("p50<500us").value, 0.5);
  });

  it("passes or fails on the figures, errors as a share of all attempts", () => {
    assert.equal(judge(parseThreshold("p99<50ms"), figures).passed, true);
    assert.deepEqual(judge(parseThreshold("p99<40ms"), figures), {
      threshold: "p99<40ms",
      actual: 40,
      passed: false,
    });
    assert.equal(judge(parseThreshold("errors<1%"), figures).passed, false, "10 of 1000 is 1%");
    assert.equal(judge(parseThreshold("errors<=1%"), figures).passed, true);
    assert.equal(judge(parseThreshold("errors<10"), figures).passed, false);
    assert.equal(judge(parseThreshold("rate>=190"), figures).passed, true);
    assert.equal(
      judge(parseThreshold("acs.p99<1s"), undefined).passed,
      false,
      "a series the run lacks fails",
    );
  });
});

describe("the open model's schedule", () => {
  it("spaces arrivals at a fixed rate, the warm-up first at the same rate", () => {
    const schedule = new ArrivalSchedule([{ durationMs: 2000, rate: 100 }], 100, 1000);
    assert.equal(schedule.endMs, 3000);
    assert.equal(schedule.dueAt(0), 0);
    assert.equal(schedule.dueAt(1), 10);
    assert.equal(schedule.dueAt(150), 1500);
    assert.equal(schedule.dueAt(299), 2990);
    assert.equal(schedule.dueAt(300), undefined, "300 arrivals in 3 s, then none");
  });

  it("ramps linearly: as many arrivals as the rate's integral", () => {
    // 0 -> 100/s over 2 s: 100 arrivals, the k-th at sqrt(2k / slope).
    const schedule = new ArrivalSchedule([{ durationMs: 2000, rate: 100 }], 0, 0);
    assert.equal(schedule.dueAt(0), 0);
    assert.ok(Math.abs((schedule.dueAt(50) as number) - 1414.2) < 0.1);
    assert.ok((schedule.dueAt(99) as number) < 2000);
    assert.equal(schedule.dueAt(100), undefined);
  });
});

describe("what the load tool tells apart", () => {
  it("knows the embedded sandbox by its participant id's seeded fingerprint", () => {
    const seeded = (name: string) =>
      `1220${createHash("sha256").update(`sandbox-participant:${name}`).digest("hex")}`;
    assert.equal(isEmbeddedSandbox(`sandbox::${seeded("sandbox")}`), true);
    assert.equal(isEmbeddedSandbox(`p1::${seeded("p1")}`), true);
    assert.equal(
      isEmbeddedSandbox(`sandbox::1220${"ab".repeat(32)}`),
      false,
      "a Canton participant named sandbox",
    );
    assert.equal(isEmbeddedSandbox("participant1"), false);
  });

  it("reads a token's expiry without checking it, and none from what is not a JWT", () => {
    const payload = Buffer.from(JSON.stringify({ sub: "u", exp: 1_800_000_000 })).toString("base64url");
    assert.equal(tokenExpiry(`e30.${payload}.sig`), 1_800_000_000_000);
    assert.equal(tokenExpiry("not-a-jwt"), undefined);
  });
});

describe("the contracts the reassignment scenario moves", () => {
  it("moves each one step at a time: unassign to the other synchronizer, assign there, and back", () => {
    const pool = new ReassignmentPool([{ contractId: "c1", synchronizerId: "s1" }], ["s1", "s2"]);
    const contract = { contractId: "c1", synchronizerId: "s1" };
    assert.deepEqual(pool.nextCommand(contract), {
      UnassignCommand: { value: { contractId: "c1", source: "s1", target: "s2" } },
    });
    const unassigned = { reassignmentId: "r1", source: "s1", target: "s2" };
    pool.advance(contract, { reassignment: { events: [{ JsUnassignedEvent: { value: unassigned } }] } });
    assert.deepEqual(pool.nextCommand(contract), { AssignCommand: { value: unassigned } });
    pool.advance(contract, { reassignment: { events: [{}] } });
    assert.deepEqual(contract, { contractId: "c1", synchronizerId: "s2", unassigned: undefined });
    assert.deepEqual(pool.nextCommand(contract), {
      UnassignCommand: { value: { contractId: "c1", source: "s2", target: "s1" } },
    });
  });

  it("gives a request a contract no other holds, the next waiting one the contract given back", async () => {
    const pool = new ReassignmentPool([{ contractId: "c1", synchronizerId: "s1" }], ["s1", "s2"]);
    const first = await pool.take();
    let second: string | undefined;
    const waiting = pool.take().then((c) => {
      second = c.contractId;
    });
    await Promise.resolve();
    assert.equal(second, undefined, "all held: it waits");
    pool.give(first);
    await waiting;
    assert.equal(second, "c1");
  });
});
