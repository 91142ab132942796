import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { updatesRequest } from "../support/update-requests.js";
import { call, wildcard } from "./ledger-client.js";

const SECRET = "token-renewal-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

/**
 * A WebSocket stream of `path`: its transactions' offsets, its other elements counted, its error
 * frames, its close. `pauseAtFirst`: the client stops reading at its first element, until `resume`.
 */
class Stream {
  readonly transactions: number[] = [];
  elements = 0;
  readonly frames: { code?: string; context?: Record<string, string> }[] = [];
  closed: number | undefined;
  readonly #socket: WebSocket;

  constructor(
    stack: Stack,
    token: string,
    request: unknown,
    options: { path?: string; pauseAtFirst?: boolean } = {},
  ) {
    this.#socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${options.path ?? "/v2/updates"}`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    this.#socket.on("open", () => this.#socket.send(JSON.stringify(request)));
    this.#socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as {
        code?: string;
        update?: { Transaction?: { value: { offset: number } } };
      };
      if (frame.code !== undefined) {
        this.frames.push(frame as Stream["frames"][number]);
        return;
      }
      if (this.elements === 0 && options.pauseAtFirst) this.#socket.pause();
      this.elements += 1;
      if (frame.update?.Transaction) this.transactions.push(frame.update.Transaction.value.offset);
    });
    this.#socket.on("close", (code) => {
      this.closed = code;
    });
  }

  renew(token: string): void {
    this.#socket.send(JSON.stringify({ token }));
  }

  resume(): void {
    this.#socket.resume();
  }

  toString(): string {
    const { elements, frames, closed } = this;
    return JSON.stringify({ elements, transactions: this.transactions.slice(-5), frames, closed });
  }

  close(): void {
    this.#socket.close(1000);
  }
}

/**
 * Issue 20 items 1 and 2 over real sockets: gateway + sandbox in HS256 mode, where the sandbox
 * does what Canton's Ledger API does (a stream ends with ACCESS_TOKEN_EXPIRED when the token its
 * call was opened with expires). Two subscribers of one shared stream open it with 6-second
 * tokens; the first, whose token the shared call runs on, renews in band.
 */
describe("WebSocket streams whose clients renew their token in band", () => {
  let stack: Stack;
  let party: string;
  let writer: string;
  const token = (user: string, exp: number) => signToken(user, { key: SECRET, exp });

  before(async () => {
    // Small water marks: a client that stops reading holds the ledger's stream back at once.
    stack = await startStack(
      ["--websocket-config.high-water-mark", "65536", "--websocket-config.low-water-mark", "16384"],
      {},
      { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
    );
    const admin = signToken("participant_admin", { key: SECRET });
    party = (
      await call<{ partyDetails: { party: string } }>(
        stack,
        "POST",
        "/v2/parties",
        { partyIdHint: "renew" },
        admin,
      )
    ).body.partyDetails.party;
    for (const [id, right] of [
      ["renewer", "CanReadAs"],
      ["other-reader", "CanReadAs"],
      ["renewal-writer", "CanActAs"],
    ]) {
      const rights = [{ kind: { [right as string]: { value: { party } } } }];
      const created = await call(stack, "POST", "/v2/users", { user: { id }, rights }, admin);
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    writer = token("renewal-writer", inSeconds(240));
  });
  after(() => stack.stop());

  const createTick = async (seq: number): Promise<number> => {
    const res = await fetch(`${stack.url}/v2/commands/submit-and-wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${writer}` },
      body: JSON.stringify(tickCommands(`renewal-${seq}-${Date.now()}`, party, seq)),
    });
    const body = (await res.json()) as { completionOffset: number };
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.completionOffset;
  };

  const ledgerEnd = async (): Promise<number> =>
    (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, writer)).body.offset;
  const metric = (name: string, ...labels: string[]) => gatewayMetric(stack.url, name, ...labels);

  /** Ticks of 256 KiB each, `count` of them: more than the sockets and windows between hold. */
  const createBigTicks = async (count: number): Promise<void> => {
    const payload = "x".repeat(256 * 1024);
    for (let seq = 0; seq < count; seq++) {
      const commands = tickCommands(`big-${seq}-${Date.now()}`, party, seq);
      commands.commands[0]!.CreateCommand.createArguments.payload = payload;
      const res = await fetch(`${stack.url}/v2/commands/submit-and-wait`, {
        method: "POST",
        headers: { authorization: `Bearer ${writer}` },
        body: JSON.stringify(commands),
      });
      assert.equal(res.status, 200, await res.text());
    }
  };

  it("keeps a renewed stream going past its first token's expiry, and ends the other at its own", async () => {
    const request = updatesRequest(wildcard([party]), await ledgerEnd());
    const firstExpiry = inSeconds(6);
    const renewing = new Stream(stack, token("renewer", firstExpiry), request);
    const first = await createTick(1);
    await until(() => renewing.transactions.includes(first), { observed: () => String(renewing) });
    const expiring = new Stream(stack, token("renewer", firstExpiry), request);
    await until(() => expiring.transactions.includes(first), { observed: () => String(expiring) });

    // Another user's token is refused, and the stream goes on.
    renewing.renew(token("other-reader", inSeconds(60)));
    await until(() => renewing.frames.length === 1, { observed: () => String(renewing) });
    assert.equal(renewing.frames[0]?.context?.token_renewal, "refused", String(renewing));
    renewing.renew(token("renewer", inSeconds(60)));

    // Past the first token's expiry: the stream that did not renew has ended, the other reads on.
    await until(() => expiring.closed !== undefined, { observed: () => String(expiring) });
    assert.ok(Date.now() >= firstExpiry * 1000, "not before its token's expiry");
    assert.equal(expiring.frames.at(-1)?.code, "ACCESS_TOKEN_EXPIRED", String(expiring));
    const second = await createTick(2);
    await until(() => renewing.transactions.includes(second) || renewing.closed !== undefined, {
      observed: () => String(renewing),
    });
    assert.deepEqual(renewing.transactions, [first, second], String(renewing));
    assert.equal(renewing.closed, undefined, String(renewing));
    assert.equal(renewing.frames.length, 1, String(renewing));
    renewing.close();
  });

  it("moves a shared call onto the subscriber's token that expires later before its owner's expires", async () => {
    const request = updatesRequest(wildcard([party]), await ledgerEnd());
    const owner = new Stream(stack, token("renewer", inSeconds(5)), request);
    const first = await createTick(3);
    await until(() => owner.transactions.includes(first), { observed: () => String(owner) });
    const rotated = () => metric("ledger_gateway_fanout_rotations_total", 'cause="expiry"');
    const handovers = () => metric("ledger_gateway_fanout_handovers_total");
    const [rotatedBefore, handoversBefore] = [await rotated(), await handovers()];

    // The owner's token is within 10 s of its expiry: the call moves as soon as a later one joins.
    const lasting = new Stream(stack, token("other-reader", inSeconds(120)), request);
    await until(() => lasting.transactions.includes(first), { observed: () => String(lasting) });
    await until(async () => (await rotated()) === rotatedBefore + 1, {
      observed: async () => `rotations ${await rotated()}, before ${rotatedBefore}`,
    });
    await until(() => owner.closed !== undefined, { observed: () => String(owner) });
    assert.equal(owner.frames.at(-1)?.code, "ACCESS_TOKEN_EXPIRED", String(owner));

    const second = await createTick(4);
    await until(() => lasting.transactions.includes(second), { observed: () => String(lasting) });
    assert.deepEqual(lasting.transactions, [first, second], String(lasting));
    assert.deepEqual(lasting.frames, [], String(lasting));
    // Moved before the ledger ended the owner's call: no handover after a refusal.
    assert.equal(await handovers(), handoversBefore);
    lasting.close();
  });

  it("moves a bounded stream's own call onto the renewed token: every element, past the first token's expiry", async () => {
    const begin = await ledgerEnd();
    const ticks = 96;
    await createBigTicks(ticks);
    const request = updatesRequest(wildcard([party]), begin, await ledgerEnd());
    const firstExpiry = inSeconds(5);
    const accepted = () => metric("ledger_gateway_ws_token_renewals_total", 'outcome="accepted"');
    const acceptedBefore = await accepted();
    // The client stops reading at once: the ledger's call is held back past the first expiry.
    const stream = new Stream(stack, token("renewer", firstExpiry), request, { pauseAtFirst: true });
    await until(() => stream.elements > 0, { observed: () => String(stream) });
    stream.renew(token("renewer", inSeconds(120)));
    await until(async () => (await accepted()) === acceptedBefore + 1, { observed: () => String(stream) });
    await new Promise((resolve) => setTimeout(resolve, firstExpiry * 1000 + 1000 - Date.now()));

    stream.resume();
    await until(() => stream.closed !== undefined, { observed: () => String(stream) });
    assert.deepEqual(stream.frames, [], String(stream));
    assert.equal(stream.transactions.length, ticks, String(stream));
    assert.equal(stream.closed, 1000);
  });

  it("refuses a renewal on the active contracts, which cannot move, and goes on", async () => {
    const request = { activeAtOffset: await ledgerEnd(), eventFormat: wildcard([party]) };
    const refused = () => metric("ledger_gateway_ws_token_renewals_total", 'outcome="refused"');
    const refusedBefore = await refused();
    const acs = new Stream(stack, token("renewer", inSeconds(120)), request, {
      path: "/v2/state/active-contracts",
      pauseAtFirst: true,
    });
    await until(() => acs.elements > 0, { observed: () => String(acs) });
    acs.renew(token("renewer", inSeconds(180)));
    await until(async () => (await refused()) === refusedBefore + 1, { observed: () => String(acs) });

    acs.resume();
    await until(() => acs.closed !== undefined, { observed: () => String(acs) });
    assert.equal(acs.closed, 1000, String(acs));
    assert.equal(acs.frames.length, 1, String(acs));
    assert.equal(acs.frames[0]?.context?.token_renewal, "refused", String(acs));
    assert.match(String((acs.frames[0] as { cause?: string }).cause), /cannot move onto a renewed token/);
    // Every active contract: the ticks of the tests before.
    assert.ok(acs.elements >= 96, String(acs));
  });
});
