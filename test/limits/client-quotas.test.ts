import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ClientLimits,
  ClientQuotas,
  clientQuotaBuffer,
  type QuotaRefusal,
} from "../../src/limits/client-quotas.js";

const OFF: ClientLimits = {
  wsConnectionsPerUser: 0,
  wsConnectionsPerAddress: 0,
  streamsPerUser: 0,
  httpInFlightPerUser: 0,
  commandsPerSecondPerUser: 0,
  commandsBurstPerUser: 0,
};

function quotas(limits: Partial<ClientLimits>): { quotas: ClientQuotas; refusals: QuotaRefusal[] } {
  const all = { ...OFF, ...limits };
  const refusals: QuotaRefusal[] = [];
  return { quotas: new ClientQuotas(all, clientQuotaBuffer(all), (r) => refusals.push(r)), refusals };
}

describe("ClientQuotas", () => {
  it("makes no table when every cap is off, and then holds nothing", () => {
    assert.equal(clientQuotaBuffer(OFF), undefined);
    assert.equal(clientQuotaBuffer({ ...OFF, commandsBurstPerUser: 5 }), undefined);
    const { quotas: q } = quotas({});
    assert.equal(q.hold([{ cap: "streams-per-user", who: "alice" }]).refusal, undefined);
    assert.equal(q.command("alice"), undefined);
  });

  it("tells which transports count: HTTP for in-flight, streams and commands, WebSockets for connections and streams", () => {
    const of = (limits: Partial<ClientLimits>) => {
      const { quotas: q } = quotas(limits);
      return [q.countsHttp, q.countsWebSockets];
    };
    assert.deepEqual(of({ wsConnectionsPerAddress: 1 }), [false, true]);
    assert.deepEqual(of({ wsConnectionsPerUser: 1 }), [false, true]);
    assert.deepEqual(of({ httpInFlightPerUser: 1 }), [true, false]);
    assert.deepEqual(of({ commandsPerSecondPerUser: 1 }), [true, false]);
    assert.deepEqual(of({ streamsPerUser: 1 }), [true, true]);
  });

  it("takes every claim or none: a refused one gives back those taken before it", () => {
    const { quotas: q, refusals } = quotas({ wsConnectionsPerAddress: 2, wsConnectionsPerUser: 1 });
    const claims = (user: string) =>
      [
        { cap: "ws-connections-per-address", who: "10.0.0.1" },
        { cap: "ws-connections-per-user", who: user },
      ] as const;
    const first = q.hold(claims("alice"));
    assert.equal(first.refusal, undefined);
    const second = q.hold(claims("alice"));
    assert.deepEqual(second.refusal, {
      cap: "ws-connections-per-user",
      limit: 1,
      reason: "limit",
      retryAfterMs: undefined,
    });
    // The address's slot the refused hold took is back: bob gets the second one.
    assert.equal(q.hold(claims("bob")).refusal, undefined);
    assert.equal(q.hold(claims("carol")).refusal?.cap, "ws-connections-per-address");
    assert.deepEqual(
      refusals.map((r) => r.cap),
      ["ws-connections-per-user", "ws-connections-per-address"],
    );
  });

  it("gives a slot back once, however often release is called", () => {
    const { quotas: q } = quotas({ streamsPerUser: 2 });
    const claim = [{ cap: "streams-per-user", who: "alice" }] as const;
    const a = q.hold(claim);
    const b = q.hold(claim);
    assert.ok(q.hold(claim).refusal);
    a.release();
    a.release();
    assert.equal(q.hold(claim).refusal, undefined);
    assert.ok(q.hold(claim).refusal, "b and the new hold are still held");
    b.release();
  });

  it("does not count a claim without a user (no token)", () => {
    const { quotas: q } = quotas({ httpInFlightPerUser: 1 });
    for (let i = 0; i < 3; i++)
      assert.equal(q.hold([{ cap: "http-in-flight-per-user", who: undefined }]).refusal, undefined);
  });

  it("rates commands per user with a burst of one second's worth unless told", () => {
    const { quotas: q } = quotas({ commandsPerSecondPerUser: 2 });
    assert.equal(q.command("alice"), undefined);
    assert.equal(q.command("alice"), undefined);
    const refused = q.command("alice");
    assert.equal(refused?.cap, "commands-per-second-per-user");
    assert.equal(refused?.limit, 2);
    assert.ok(refused?.retryAfterMs !== undefined && refused.retryAfterMs > 0 && refused.retryAfterMs <= 500);
    assert.equal(q.command("bob"), undefined);
    assert.equal(q.command(undefined), undefined);
  });
});
