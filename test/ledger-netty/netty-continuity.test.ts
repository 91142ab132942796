import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import type { RunningGateway } from "../../src/gateway.js";
import { nettyLedgerBuild } from "../support/netty-ledger-build.js";
import { type NettyStack, startNettyStack } from "../support/netty-stack.js";
import { tokenFor } from "../support/tokens.js";
import { subscribeUpdates } from "../support/update-subscription.js";

const build = await nettyLedgerBuild();
const skip = "skip" in build ? build.skip : false;

/**
 * Issue 20 item 3 through grpc-java on Netty configured as Canton's Ledger API: the ledger closes
 * its connection gracefully every 3 s (max connection age, 1 s grace: streams still open then are
 * cancelled), and then its front is killed and started again 3 s later. Transactions are created
 * all along, during the outage through a second gateway straight on the sandbox. One WebSocket
 * stream gets every one of them exactly once, in order, on the same socket.
 */
describe("a WebSocket stream through GOAWAY cycles and a restart of the Netty ledger", { skip }, () => {
  let stack: NettyStack;
  let direct: RunningGateway;

  before(async () => {
    stack = await startNettyStack({
      netty: { maxConnectionAgeSeconds: 3, maxConnectionAgeGraceSeconds: 1 },
      direct: true,
    });
    direct = stack.direct as RunningGateway;
  });
  after(() => stack?.stop());

  /** A tick created straight on the sandbox: its offset. */
  const createDirectly = async (seq: number): Promise<number> => {
    const res = await fetch(`http://127.0.0.1:${direct.port}/v2/commands/submit-and-wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokenFor(`actAs-${stack.party}`)}` },
      body: JSON.stringify(tickCommands(`continuity-${seq}`, stack.party, seq)),
    });
    const body = (await res.json()) as { completionOffset: number };
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.completionOffset;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("receives every transaction created meanwhile exactly once, in order, without a frame or a close", async () => {
    const stream = subscribeUpdates(stack.url, stack.party);
    await stream.elements(5);
    const created: number[] = [];
    // Three connection ages and their graces: at least two GOAWAY cycles with the stream open.
    for (let seq = 1; seq <= 20; seq++) {
      created.push(await createDirectly(seq));
      await pause(500);
    }
    await stack.netty.kill();
    for (let seq = 21; seq <= 23; seq++) {
      created.push(await createDirectly(seq));
      await pause(1_000);
    }
    await stack.netty.restart();
    created.push(await createDirectly(24));

    const last = created.at(-1) as number;
    const reached = await stream.reaches(last);
    const elements = stream.offsets.map((offset, i) => `${offset}:${stream.kinds[i]}`);
    const seen = JSON.stringify({ elements, errors: stream.errors });
    assert.ok(reached, `the stream closed before offset ${last}: ${seen}`);
    const transactions = stream.offsets.filter((_offset, i) => stream.kinds[i] === "Transaction");
    assert.deepEqual(transactions.slice(5), created, seen);
    assert.equal(new Set(elements).size, elements.length, `a duplicate: ${seen}`);
    assert.deepEqual(stream.errors, [], seen);
    const resumes = await (await stack.request("/metrics", { token: null })).text();
    const goaways = Number(
      /^ledger_gateway_stream_resumes_total\{endpoint="\/v2\/updates",cause="goaway"\} (\d+)/m.exec(
        resumes,
      )?.[1],
    );
    assert.ok(
      goaways >= 2,
      `resumed after at least two GOAWAYs: ${resumes.match(/^ledger_gateway_stream_resumes.*$/gm)}`,
    );
    stream.close();
  });
});
