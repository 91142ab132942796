import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { nettyLedgerBuild } from "../support/netty-ledger-build.js";
import { type NettyStack, startNettyStack } from "../support/netty-stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { subscribeUpdates, type UpdateSubscription } from "../support/update-subscription.js";

const build = await nettyLedgerBuild();
const skip = "skip" in build ? build.skip : false;

type Json = Record<string, unknown>;

const UPDATES = 'endpoint="/v2/updates"';

/**
 * Issue 35 through grpc-java on Netty configured as Canton's Ledger API, which ends a stream
 * with STALE_STREAM_AUTHORIZATION once its user's rights changed (as Canton's
 * UserBasedOngoingAuthorization does, here every second): a change of rights of the user whose
 * token the shared ledger call runs on ends that user's sockets, and only theirs.
 */
describe("a shared stream through the Netty ledger whose owner's right is revoked", { skip }, () => {
  let stack: NettyStack;
  let alice: string;

  const api = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.request(
      path,
      body === undefined ? { method } : { method, body: JSON.stringify(body) },
    );
    const text = await res.text();
    assert.equal(res.status, 200, `${method} ${path}: ${text}`);
    return JSON.parse(text) as Json;
  };
  const readAs = (party: string) => ({ kind: { CanReadAs: { value: { party } } } });
  let ticks = 0;
  /** One transaction of alice's, committed by alice; its offset. */
  const commit = async (): Promise<number> => {
    ticks += 1;
    const res = await stack.request("/v2/commands/submit-and-wait", {
      method: "POST",
      body: JSON.stringify(tickCommands(`stale-stream-${ticks}`, alice, ticks)),
      token: tokenFor("alice"),
    });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.completionOffset as number;
  };
  const metric = (name: string, ...labels: string[]) => gatewayMetric(stack.url, name, UPDATES, ...labels);
  const shared = () => metric("ledger_gateway_fanout_subscribers", 'mode="shared"');
  const seen = (stream: UpdateSubscription) =>
    JSON.stringify({ offsets: stream.offsets, kinds: stream.kinds, errors: stream.errors });
  const transactions = (stream: UpdateSubscription) =>
    stream.offsets.filter((_offset, i) => stream.kinds[i] === "Transaction");

  before(async () => {
    stack = await startNettyStack({
      netty: { userRightsCheckIntervalSeconds: 1 },
      // The gateway's own re-check would end carol's sockets by itself: the ledger's abort is tested.
      gatewayArgs: ["--websocket-config.stream-authorization-recheck-interval", "0s"],
    });
    const allocated = await api("POST", "/v2/parties", { partyIdHint: "alice" });
    alice = (allocated.partyDetails as { party: string }).party;
    await api("POST", "/v2/users", {
      user: { id: "alice" },
      rights: [{ kind: { CanActAs: { value: { party: alice } } } }],
    });
    await api("POST", "/v2/users", { user: { id: "carol" }, rights: [readAs(alice)] });
  });
  after(() => stack?.stop());

  it("ends carol's sockets (the call's owner) with the ledger's STALE_STREAM_AUTHORIZATION; alice's stream moves onto her token with no gap and no duplicate", {
    timeout: 180_000,
  }, async () => {
    const begin = (await api("GET", "/v2/state/ledger-end")).offset as number;
    const handovers = () => metric("ledger_gateway_fanout_handovers_total");
    const handoversBefore = await handovers();
    const carolToken = tokenFor("carol");
    // carol comes first: the shared call runs on her token; a second socket of hers shares it.
    const carol = subscribeUpdates(stack.url, alice, { token: carolToken, beginExclusive: begin });
    await until(async () => (await shared()) === 1);
    const carolAgain = subscribeUpdates(stack.url, alice, { token: carolToken, beginExclusive: begin });
    const aliceStream = subscribeUpdates(stack.url, alice, {
      token: tokenFor("alice"),
      beginExclusive: begin,
    });
    await until(async () => (await shared()) === 3);
    assert.equal(await metric("ledger_gateway_fanout_upstreams"), 1);

    const committed = [await commit()];
    for (const stream of [carol, carolAgain, aliceStream])
      assert.ok(await stream.reaches(committed[0] as number), seen(stream));

    await api("PATCH", "/v2/users/carol/rights", { userId: "carol", rights: [readAs(alice)] });
    // Committed while the ledger has yet to notice, or as it aborts the call.
    committed.push(await commit());
    for (const stream of [carol, carolAgain]) {
      const { code } = await stream.closed;
      assert.equal(code, 1000);
      assert.equal(stream.errors.length, 1, seen(stream));
      assert.equal(stream.errors[0]?.code, "STALE_STREAM_AUTHORIZATION", seen(stream));
      assert.equal(stream.errors[0]?.errorCategory, 2, seen(stream));
    }
    committed.push(await commit(), await commit());
    assert.ok(await aliceStream.reaches(committed.at(-1) as number), seen(aliceStream));

    assert.deepEqual(aliceStream.errors, [], seen(aliceStream));
    assert.deepEqual(transactions(aliceStream), committed, seen(aliceStream));
    // Strictly increasing, where a checkpoint after the transaction at its offset comes after it
    // (a checkpoint may carry the offset of the transaction before it): nothing twice, nothing back.
    const positions = aliceStream.offsets.map(
      (offset, i) => 2 * offset + (aliceStream.kinds[i] === "OffsetCheckpoint" ? 1 : 0),
    );
    for (const [i, position] of positions.entries()) {
      if (i > 0) assert.ok(position > (positions[i - 1] as number), seen(aliceStream));
    }
    for (const stream of [carol, carolAgain])
      assert.deepEqual(transactions(stream), committed.slice(0, transactions(stream).length), seen(stream));
    assert.equal(await handovers(), handoversBefore + 1, "the call moved once, onto alice's token");
    assert.equal(await metric("ledger_gateway_fanout_upstreams"), 1);
    aliceStream.close();
    await until(async () => (await metric("ledger_gateway_fanout_upstreams")) === 0);
  });
});
