import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { waitFor } from "../support/transport-harness.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { type SocketOutcome, updatesSocket } from "../support/updates-socket.js";
import { allocate, userFor } from "./ledger-client.js";

/** A stack with these caps, its open WebSocket streams read every 20 ms, and users that read one party. */
function stackWithCaps(args: string[], users: string[]) {
  let stack: Stack;
  let open = 0;
  let poller: NodeJS.Timeout;
  const tokens: Record<string, string> = {};
  let party = "";
  before(async () => {
    stack = await startStack(args);
    party = await allocate(stack, "quota_ws");
    for (const id of users) tokens[id] = await userFor(stack, id, [], [party]);
    const gauge = stack.gateway.metrics?.wsStreamsOpen;
    assert.ok(gauge);
    poller = setInterval(() => {
      void gauge.get().then(({ values }) => {
        open = values.reduce((sum, { value }) => sum + value, 0);
      });
    }, 20);
  });
  after(async () => {
    clearInterval(poller);
    await stack.stop();
  });
  return {
    stack: () => stack,
    open: () => open,
    token: (id: string) => tokens[id] as string,
    party: () => party,
    /** Open-ended: the socket stays until one side closes it. */
    subscribe: (id: string) =>
      updatesSocket(stack.url, tokens[id] as string, updatesRequest(partyFilter(party))),
  };
}

/** The refusal as a client sees it: one MAXIMUM_NUMBER_OF_STREAMS error frame naming `cap`, then 1013. */
function assertRefused(outcome: SocketOutcome, cap: string, value: number): void {
  assert.equal(outcome.code, 1013);
  assert.equal(outcome.frames.length, 1);
  const [frame] = outcome.frames as {
    code: string;
    errorCategory: number;
    retryInfo: string;
    context: unknown;
  }[];
  assert.equal(frame?.code, "MAXIMUM_NUMBER_OF_STREAMS");
  assert.equal(frame?.errorCategory, 2);
  assert.equal(frame?.retryInfo, "1 second");
  assert.deepEqual(frame?.context, { limit: `limits.${cap}`, value: String(value), reason: "limit" });
}

const refusals = (stack: Stack, cap: string) =>
  gatewayMetric(stack.url, "ledger_gateway_limit_refusals_total", `cap="${cap}"`, 'reason="limit"');

describe("limits.ws-connections-per-user over real sockets", () => {
  const caps = stackWithCaps(["--limits.ws-connections-per-user", "2"], ["henry", "irene"]);

  it("opens 2 sockets of a user, refuses the third with an error frame and 1013, and opens one again after a close", async () => {
    const first = caps.subscribe("henry");
    const second = caps.subscribe("henry");
    await waitFor("two streams open", () => caps.open() === 2);
    assertRefused(await caps.subscribe("henry").ended, "ws-connections-per-user", 2);
    assert.equal(await refusals(caps.stack(), "ws-connections-per-user"), 1);

    // Another user is not affected, nor are the user's open streams.
    const other = caps.subscribe("irene");
    await waitFor("three streams open", () => caps.open() === 3);
    assert.equal(first.socket.readyState, WebSocket.OPEN);

    first.socket.close(1000);
    await first.ended;
    await waitFor("two streams open", () => caps.open() === 2);
    const again = caps.subscribe("henry");
    await waitFor("three streams open again", () => caps.open() === 3);
    for (const { socket } of [second, other, again]) socket.close(1000);
    await waitFor("no stream open", () => caps.open() === 0);
    assert.equal(await refusals(caps.stack(), "ws-connections-per-user"), 1);
  });

  it("gives a slot back when the stream ends with an error frame (a query frame that is no request)", async () => {
    for (let i = 0; i < 3; i++) {
      const failed = await updatesSocket(caps.stack().url, caps.token("henry"), { nothing: i }).ended;
      assert.equal((failed.frames[0] as { code?: string } | undefined)?.code, "INVALID_ARGUMENT");
    }
    const a = caps.subscribe("henry");
    const b = caps.subscribe("henry");
    await waitFor("two streams open", () => caps.open() === 2);
    for (const { socket } of [a, b]) socket.close(1000);
    await waitFor("no stream open", () => caps.open() === 0);
  });

  it("gives a slot back when the gateway ends the stream (a bounded request's close 1000)", async () => {
    const bounded = updatesSocket(
      caps.stack().url,
      caps.token("henry"),
      updatesRequest(partyFilter(caps.party()), 0, 1),
    );
    assert.equal((await bounded.ended).code, 1000);
    const a = caps.subscribe("henry");
    const b = caps.subscribe("henry");
    await waitFor("two streams open", () => caps.open() === 2);
    for (const { socket } of [a, b]) socket.close(1000);
    await waitFor("no stream open", () => caps.open() === 0);
  });
});

describe("limits.ws-connections-per-address over real sockets", () => {
  const caps = stackWithCaps(["--limits.ws-connections-per-address", "2"], ["jack", "kate", "liam"]);

  it("refuses a third socket from one address whoever's token it carries, and opens one after a close", async () => {
    const first = caps.subscribe("jack");
    const second = caps.subscribe("kate");
    await waitFor("two streams open", () => caps.open() === 2);
    assertRefused(await caps.subscribe("liam").ended, "ws-connections-per-address", 2);
    assert.equal(await refusals(caps.stack(), "ws-connections-per-address"), 1);
    // HTTP from the address is not a WebSocket connection.
    assert.equal((await caps.stack().request("/v2/version", { token: caps.token("liam") })).status, 200);
    first.socket.close(1000);
    await waitFor("one stream open", () => caps.open() === 1);
    const again = caps.subscribe("liam");
    await waitFor("two streams open again", () => caps.open() === 2);
    for (const { socket } of [second, again]) socket.close(1000);
    await waitFor("no stream open", () => caps.open() === 0);
  });
});

describe("limits.streams-per-user across WebSockets and list twins", () => {
  const caps = stackWithCaps(["--limits.streams-per-user", "1"], ["mia", "noah"]);

  it("counts a user's WebSocket and list twin against one cap, and gives the stream back at the close", async () => {
    const listTwin = (id: string) =>
      caps.stack().request("/v2/updates", {
        method: "POST",
        body: JSON.stringify(updatesRequest(partyFilter(caps.party()), 0, 1)),
        token: caps.token(id),
      });
    const first = caps.subscribe("mia");
    await waitFor("one stream open", () => caps.open() === 1);
    assert.equal((await listTwin("mia")).status, 429);
    assertRefused(await caps.subscribe("mia").ended, "streams-per-user", 1);
    assert.equal(await refusals(caps.stack(), "streams-per-user"), 2);
    assert.equal((await listTwin("noah")).status, 200);

    first.socket.close(1000);
    await waitFor("no stream open", () => caps.open() === 0);
    assert.equal((await listTwin("mia")).status, 200);
  });
});
