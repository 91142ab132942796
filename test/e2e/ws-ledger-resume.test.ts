import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import type { RunningGateway } from "../../src/gateway.js";
import type { FaultProxy } from "../support/fault-proxy.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type LedgerBehindProxy, ledgerBehindProxy } from "../support/ledger-behind-proxy.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const TICKS = 5;

/** An open-ended /v2/updates stream from the start: tick numbers, offsets, error frames, close. */
class Stream {
  readonly seqs: number[] = [];
  /** Offset and kind of every element, transactions and checkpoints alike. */
  readonly elements: string[] = [];
  readonly errors: unknown[] = [];
  closedWith: number | undefined;
  readonly #socket: WebSocket;

  constructor(port: number, party: string) {
    this.#socket = new WebSocket(`ws://127.0.0.1:${port}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${tokenFor(`actAs-${party}`)}`,
    ]);
    this.#socket.on("open", () => this.#socket.send(JSON.stringify(updatesRequest(partyFilter(party)))));
    this.#socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as {
        update?: Record<
          string,
          { value: { offset: number; events?: { CreatedEvent: { createArgument: { seq: string } } }[] } }
        >;
      };
      if (frame.update === undefined) {
        this.errors.push(frame);
        return;
      }
      const [[kind, { value }]] = Object.entries(frame.update) as [
        [
          string,
          { value: { offset: number; events?: { CreatedEvent: { createArgument: { seq: string } } }[] } },
        ],
      ];
      this.elements.push(`${value.offset}:${kind}`);
      if (kind === "Transaction") this.seqs.push(Number(value.events?.[0]?.CreatedEvent.createArgument.seq));
    });
    this.#socket.on("close", (code) => {
      this.closedWith = code;
    });
  }

  /** What it saw, for failure messages. */
  toString(): string {
    return JSON.stringify({ seqs: this.seqs, errors: this.errors, closedWith: this.closedWith });
  }

  close(): void {
    this.#socket.close(1000);
  }
}

/**
 * Issue 20 item 3: the ledger connection lost under open streams (every connection reset, the
 * port refusing for 3 s, then back: a ledger's front restarting), with transactions created
 * meanwhile. The gateway talks to the sandbox through a fault proxy; a second gateway, straight
 * on the sandbox, submits the commands.
 */
describe("WebSocket streams across a lost ledger connection", () => {
  let proxy: FaultProxy;
  let gateway: RunningGateway;
  let direct: RunningGateway;
  let party: string;
  let ledger: LedgerBehindProxy | undefined;

  before(async () => {
    ledger = await ledgerBehindProxy("resume", TICKS);
    ({ proxy, gateway, direct, party } = ledger);
  });
  after(() => ledger?.stop());

  /** The sum of the /v2/updates series of a gateway metric whose labels include `labels`. */
  const metric = (name: string, ...labels: string[]): Promise<number> =>
    gatewayMetric(`http://127.0.0.1:${gateway.port}`, name, 'endpoint="/v2/updates"', ...labels);
  const submitTicks = async (from: number, count: number): Promise<void> => {
    for (let seq = from; seq < from + count; seq++) {
      const res = await fetch(`http://127.0.0.1:${direct.port}/v2/commands/submit-and-wait`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokenFor(`actAs-${party}`)}` },
        body: JSON.stringify(tickCommands(`resume-${seq}`, party, seq)),
      });
      assert.equal(res.status, 200, await res.text());
    }
  };

  it("keeps every socket and reopens the shared call once from the last offset: no gap, no duplicate", async () => {
    const streams = [new Stream(gateway.port, party), new Stream(gateway.port, party)];
    const seen = () => streams.map(String).join("; ");
    await until(() => streams.every((s) => s.seqs.length === TICKS), { observed: seen });
    // Both read the one shared call before the ledger goes.
    await until(async () => (await metric("ledger_gateway_fanout_subscribers", 'mode="shared"')) === 2, {
      observed: seen,
    });
    const resumesBefore = await metric("ledger_gateway_stream_resumes_total");

    const away = proxy.restart(3_000);
    await submitTicks(TICKS + 1, 3);
    await away;
    await submitTicks(TICKS + 4, 3);

    const all = Array.from({ length: TICKS + 6 }, (_, i) => i + 1);
    const allReceived = () => {
      if (streams.some((s) => s.closedWith !== undefined)) throw new Error(`a stream closed: ${seen()}`);
      return streams.every((s) => s.seqs.length >= all.length);
    };
    await until(allReceived, { observed: seen });
    for (const stream of streams) {
      assert.deepEqual(stream.seqs, all, String(stream));
      assert.equal(new Set(stream.elements).size, stream.elements.length, `a duplicate: ${stream.elements}`);
      assert.deepEqual([stream.errors, stream.closedWith], [[], undefined], String(stream));
    }
    assert.equal(
      (await metric("ledger_gateway_stream_resumes_total")) - resumesBefore,
      1,
      "the shared call reopened once",
    );
    for (const stream of streams) stream.close();
  });
});
