import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const TICKS = 2000;
const PAYLOAD = 8 * 1024;
const ENDPOINT = 'endpoint="/v2/updates"';

/** An update stream read by a client that counts its transactions and may stop reading. */
class Reader {
  readonly #socket: WebSocket;
  readonly closed: Promise<number>;
  #stopped = false;
  offset = 0;
  received = 0;

  constructor(url: string, token: string, request: unknown) {
    this.#socket = new WebSocket(`${url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    this.#socket.on("open", () => {
      this.#socket.send(JSON.stringify(request));
      if (this.#stopped) this.#socket.pause();
    });
    this.#socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as {
        update?: { Transaction?: { value: { offset: number } } };
      };
      const transaction = frame.update?.Transaction;
      if (transaction === undefined) return;
      this.received++;
      this.offset = transaction.value.offset;
    });
    this.closed = new Promise((resolve) => this.#socket.on("close", (code) => resolve(code)));
    this.#socket.on("error", () => undefined);
  }

  /**
   * ws's own pause, once the socket is open (ws ignores it before): its TCP socket is no longer
   * read, so what the gateway sends piles up.
   */
  stopReading(): void {
    this.#stopped = true;
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.pause();
  }

  resume(): void {
    this.#stopped = false;
    this.#socket.resume();
  }

  close(): Promise<number> {
    this.#socket.close(1000);
    return this.closed;
  }

  /** Cut at once, whether or not it reads: a failed test's cleanup. */
  terminate(): Promise<number> {
    this.#socket.terminate();
    return this.closed;
  }
}

/**
 * The subscriber lag gauges over real sockets: a sandbox preloaded with 16 MiB of transactions,
 * read through the gateway's WebSocket by a client that keeps up and by clients that stop reading.
 */
describe("subscriber lag", () => {
  let stack: Stack;
  let token: string;
  let party: string;
  let end: number;
  /** The four gauges of /v2/updates, from one scrape. */
  const lag = async () => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    const value = (name: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${name}{${ENDPOINT}} `));
      return Number(line?.split(" ")[1]);
    };
    return {
      maxBytes: value("ledger_gateway_subscriber_lag_max_bytes"),
      bytes: value("ledger_gateway_subscriber_lag_bytes"),
      maxOffsets: value("ledger_gateway_subscriber_lag_max_offsets"),
      offsets: value("ledger_gateway_subscriber_lag_offsets"),
    };
  };
  const none = async () => Object.values(await lag()).every((v) => v === 0);
  const observed = async () => JSON.stringify(await lag());

  before(async () => {
    stack = await startStack(
      [],
      {},
      { sandbox: { preload: { ticks: TICKS, payloadBytes: PAYLOAD, party: "lagger" } } },
    );
    const { participantId } = (await (await stack.request("/v2/parties/participant-id")).json()) as {
      participantId: string;
    };
    party = `lagger::${participantId.split("::")[1]}`;
    token = tokenFor(`actAs-${party}`);
    end = ((await (await stack.request("/v2/state/ledger-end")).json()) as { offset: number }).offset;
  });
  after(() => stack.stop());

  it("is 0 in bytes and offsets for a subscriber that keeps up", async () => {
    assert.deepEqual(await lag(), { maxBytes: 0, bytes: 0, maxOffsets: 0, offsets: 0 }, "declared at 0");
    const reader = new Reader(stack.url, token, updatesRequest(partyFilter(party)));
    await until(() => reader.received === TICKS);
    await until(none, { observed });
    await reader.close();
  });

  for (const [kind, request] of [
    // Open-ended: a member of the fan-out's shared stream, behind its upstream.
    ["a fan-out member", () => updatesRequest(partyFilter(party))],
    // Bounded: its own ledger call, behind the newest offset the endpoint's streams were handed.
    ["a subscriber on its own call", () => updatesRequest(partyFilter(party), 0, end)],
  ] as const) {
    it(`shows ${kind} that stops reading as behind in bytes and offsets, and 0 once it caught up`, async (t) => {
      const readers: Reader[] = [];
      // Whatever failed, the next test starts with no reader of this one left behind.
      t.after(() => Promise.all(readers.map((reader) => reader.terminate())));
      const keepsUp = new Reader(stack.url, token, updatesRequest(partyFilter(party)));
      readers.push(keepsUp);
      await until(() => keepsUp.received === TICKS);
      const slow = new Reader(stack.url, token, request());
      readers.push(slow);
      slow.stopReading();
      // The kernel's socket buffers take a few MiB before the gateway's own (uWS's) fills. One slow
      // reader among caught-up ones: the sum is its lag. A scrape may still see a reader that keeps
      // up with a frame or two in uWS's buffer for a moment (its last elements, the sandbox's
      // offset checkpoint half a second after it caught up), so the sum is waited for, not taken
      // from the first scrape that shows the slow one behind.
      let behind = await lag();
      await until(
        async () => {
          assert.ok(slow.received < TICKS, `read everything; observed ${JSON.stringify(behind)}`);
          behind = await lag();
          return (
            behind.maxBytes > 0 &&
            behind.maxOffsets > 0 &&
            behind.bytes === behind.maxBytes &&
            behind.offsets === behind.maxOffsets
          );
        },
        { observed },
      );
      assert.ok(slow.received < TICKS, `the slow reader got ${slow.received} of ${TICKS}`);

      slow.resume();
      await until(() => slow.received === TICKS, { observed: () => `${slow.received} received` });
      await until(none, { observed });
      await Promise.all([slow.close(), keepsUp.close()]);
    });
  }
});
