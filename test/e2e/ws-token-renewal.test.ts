import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { updatesRequest } from "../support/update-requests.js";
import { call, wildcard } from "./ledger-client.js";

const SECRET = "token-renewal-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

/** An open-ended /v2/updates WebSocket stream: its transactions' offsets, its other frames, its close. */
class Stream {
  readonly transactions: number[] = [];
  readonly frames: { code?: string; context?: Record<string, string> }[] = [];
  closed: number | undefined;
  readonly #socket: WebSocket;

  constructor(stack: Stack, token: string, request: unknown) {
    this.#socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    this.#socket.on("open", () => this.#socket.send(JSON.stringify(request)));
    this.#socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as {
        update?: { Transaction?: { value: { offset: number } } };
      };
      if (frame.update?.Transaction) this.transactions.push(frame.update.Transaction.value.offset);
      else if (frame.update === undefined) this.frames.push(frame as Stream["frames"][number]);
    });
    this.#socket.on("close", (code) => {
      this.closed = code;
    });
  }

  renew(token: string): void {
    this.#socket.send(JSON.stringify({ token }));
  }

  toString(): string {
    return JSON.stringify({ transactions: this.transactions, frames: this.frames, closed: this.closed });
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
    stack = await startStack(
      [],
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

  it("keeps a renewed stream going past its first token's expiry, and ends the other at its own", async () => {
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, writer)).body
      .offset;
    const request = updatesRequest(wildcard([party]), end);
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
});
