import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../../support/gateway-metric.js";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { updatesRequest } from "../../support/update-requests.js";
import { allocate, call, iouCommitter, userFor, wildcard } from "../ledger-client.js";
import { updateIds, type WatchedSocket, watchedSocket } from "./watched-socket.js";

const RECHECK_MS = 1_000;
/** Room for a loaded machine on top of Canton's staleness bound (twice the re-check interval). */
const SLACK_MS = 5_000;
/** How often the attacker opens another socket. */
const EVERY_MS = 200;

const readAs = (party: string) => ({ kind: { CanReadAs: { value: { party } } } });

/**
 * Attack on the shared yes (a joiner of a running shared stream is admitted with another
 * subscriber's yes on the same token, request and offset while it is younger than the re-check
 * interval; an upgrade of a token an open stream holds, with its admission's yes): can a reader
 * whose right was revoked keep reading by opening socket after socket, each admitted on the one
 * before it, so that the yes is handed on and never grows old?
 *
 * Carol (CanReadAs alice) reads alice's stream beside alice herself; her right is revoked; she
 * opens another socket of the same token and query every 200 ms. A shared yes is only ever the
 * ledger's own answer, with the time it was asked: handed on, it does not get younger. So within
 * twice the re-check interval (plus slack) nothing alice commits reaches any socket of carol's,
 * every one of them ends with an error or is refused, and her upgrades are refused once no
 * stream holds her token as freshly accepted; alice reads on.
 *
 * Here the sandbox refuses carol's re-checks at once, so all her sockets end at the same re-check
 * and no yes is left to hand on. A yes handed on as of the join instead of the ledger's ask time
 * would carry along only while questions go unanswered: the model's example ("a shared yes,
 * handed on", test/fanout/authorization-model.test.ts) fails on that; this one pins, against the
 * running gateway and sandbox, that the shared yes opened no way around a revocation.
 */
describe("fail closed: a revoked reader opening socket after socket on a shared yes", () => {
  let stack: Stack;
  let alice: string;
  let writer: string;
  let aliceReader: string;
  let carol: string;

  before(async () => {
    stack = await startStack([
      "--websocket-config.stream-authorization-recheck-interval",
      `${RECHECK_MS}ms`,
      "--websocket-config.resume-window",
      "0s",
    ]);
    alice = await allocate(stack, "alice");
    writer = await userFor(stack, "alice-writer", [alice]);
    aliceReader = await userFor(stack, "alice-reader", [], [alice]);
    carol = await userFor(stack, "carol-shared", [], [alice]);
  });
  const opened: WatchedSocket[] = [];
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  const commit = iouCommitter(
    () => stack,
    () => writer,
    () => alice,
    "shared-yes",
  );
  const shared = () => gatewayMetric(stack.url, "ledger_gateway_fanout_shared_admissions_total");

  it("hands no one a yes younger than the ledger's: every socket of carol's ends, nothing late reaches her", {
    timeout: 120_000,
  }, async () => {
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    const live = updatesRequest(wildcard([alice]), end);
    const open = (token: string) => {
      const socket = watchedSocket(stack.url, token, live);
      opened.push(socket);
      return socket;
    };
    const alices = open(aliceReader);
    const first = open(carol);
    const tx = await commit();
    await until(() => updateIds(alices).includes(tx.updateId), { observed: () => `${alices}` });
    await until(() => updateIds(first).includes(tx.updateId), { observed: () => `${first}` });
    // Her second socket, before the revocation, joins on her first one's yes.
    const sharedBefore = await shared();
    open(carol);
    await until(async () => (await shared()) > sharedBefore, {
      observed: async () => `shared ${await shared()}`,
    });

    const revoke = await call(stack, "PATCH", "/v2/users/carol-shared/rights", {
      userId: "carol-shared",
      rights: [readAs(alice)],
    });
    assert.equal(revoke.status, 200, JSON.stringify(revoke.body));
    const deadline = Date.now() + 2 * RECHECK_MS + SLACK_MS;

    const later: { updateId: string; at: number }[] = [];
    const attack = setInterval(() => open(carol), EVERY_MS);
    try {
      while (Date.now() < deadline + 3_000) {
        later.push(await commit());
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    } finally {
      clearInterval(attack);
    }
    const last = later.at(-1) ?? (await commit());
    await until(() => updateIds(alices).includes(last.updateId), { observed: () => `${alices}` });
    // The sockets still opening when the attack stopped: their answer (an error frame or a refused upgrade).
    const carols = opened.filter((socket) => socket !== alices);
    await until(() => carols.every((socket) => socket.closedWith !== undefined), {
      observed: () => carols.filter((s) => s.closedWith === undefined).join("\n"),
    });

    const late = later.filter((t) => t.at > deadline).map((t) => t.updateId);
    const leaked = carols.filter((socket) => updateIds(socket).some((id) => late.includes(id as string)));
    assert.equal(
      leaked.length,
      0,
      `${leaked.length} of carol's ${carols.length} sockets received transactions alice committed more than ${2 * RECHECK_MS + SLACK_MS} ms after the revocation: ${leaked.join("\n")}`,
    );
    assert.equal(alices.closedWith, undefined, `alice's stream ended: ${alices}`);
    assert.ok(
      later.every((t) => updateIds(alices).includes(t.updateId)),
      `alice missed transactions: ${alices}`,
    );
  });
});
