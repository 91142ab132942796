import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { nettyLedgerBuild } from "../support/netty-ledger-build.js";
import { goawayResumes, type NettyStack, startNettyStack } from "../support/netty-stack.js";
import { until } from "../support/until.js";
import { subscribeUpdates } from "../support/update-subscription.js";

const build = await nettyLedgerBuild();
const skip = "skip" in build ? build.skip : false;

/**
 * Issue 20 item 5 through grpc-java on Netty: a ledger that permits a ping every 2 s (Canton: 10 s)
 * and a gateway configured to ping every 500 ms. grpc-java closes the connection of a client
 * that pings too often (GOAWAY ENHANCE_YOUR_CALM `too_many_pings`); the gateway doubles its
 * interval for the next connection, as grpc-js does, and the stream open all along is reopened
 * from its last offset.
 */
describe("a WebSocket stream from a gateway pinging every 500 ms to a Netty ledger that permits every 2 s", {
  skip,
}, () => {
  let stack: NettyStack;

  before(async () => {
    stack = await startNettyStack({
      netty: { permitKeepAliveSeconds: 2 },
      gatewayArgs: ["--ledger.keepalive-interval", "500ms"],
    });
  });
  after(() => stack?.stop());

  it("outlives the too_many_pings GOAWAY with every transaction once, in order", async () => {
    const stream = subscribeUpdates(stack.url, stack.party);
    await stream.elements(5);
    const goaways = () => goawayResumes(stack);
    // 500 ms is too often for a 2 s permit (1 s passes here: grpc-java forgives a ping
    // strike whenever it sends the stream something, an offset checkpoint included).
    await until(async () => (await goaways()) >= 1, {
      observed: async () => `${await goaways()} goaway resumes`,
    });
    const created = [await stack.createTick(1), await stack.createTick(2)];
    const seen = JSON.stringify({ offsets: stream.offsets, errors: stream.errors });
    assert.ok(await stream.reaches(created[1] as number), seen);
    const transactions = stream.offsets.filter((_offset, i) => stream.kinds[i] === "Transaction");
    assert.deepEqual(transactions.slice(5), created, seen);
    const elements = stream.offsets.map((offset, i) => `${offset}:${stream.kinds[i]}`);
    assert.equal(new Set(elements).size, elements.length, `a duplicate: ${seen}`);
    assert.deepEqual(stream.errors, [], seen);
    stream.close();
  });
});
