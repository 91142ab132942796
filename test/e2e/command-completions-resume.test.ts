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

const PATH = "/v2/commands/command-completions";

interface Frame {
  completionResponse?: {
    Completion?: { value: { commandId: string; offset: number } };
    OffsetCheckpoint?: { value: { offset: number } };
  };
}

/** An open-ended GetCompletions socket: its completions' command ids, its error frames, its close. */
class CompletionsSocket {
  readonly commandIds: string[] = [];
  readonly errors: unknown[] = [];
  closedWith: number | undefined;
  readonly #socket: WebSocket;

  constructor(port: number, token: string, request: unknown) {
    this.#socket = new WebSocket(`ws://127.0.0.1:${port}${PATH}`, ["daml.ws.auth", `jwt.token.${token}`]);
    this.#socket.on("open", () => this.#socket.send(JSON.stringify(request)));
    this.#socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as Frame;
      if (frame.completionResponse === undefined) this.errors.push(frame);
      const completion = frame.completionResponse?.Completion?.value;
      if (completion !== undefined) this.commandIds.push(completion.commandId);
    });
    this.#socket.on("close", (code) => {
      this.closedWith = code;
    });
  }

  toString(): string {
    return JSON.stringify({ commandIds: this.commandIds, errors: this.errors, closedWith: this.closedWith });
  }

  close(): void {
    this.#socket.close(1000);
  }
}

/**
 * Resumption as on /v2/commands/completions: the ledger connection lost under an open
 * /v2/commands/command-completions socket (connections reset, the port refusing for 3 s), with
 * commands completed meanwhile. The gateway talks to the sandbox through a fault proxy; a second
 * gateway, straight on the sandbox, submits the commands.
 */
describe("/v2/commands/command-completions across a lost ledger connection", () => {
  let proxy: FaultProxy;
  let gateway: RunningGateway;
  let direct: RunningGateway;
  let party: string;
  let ledger: LedgerBehindProxy | undefined;

  before(async () => {
    ledger = await ledgerBehindProxy("completions", 1);
    ({ proxy, gateway, direct, party } = ledger);
  });
  after(() => ledger?.stop());

  const token = () => tokenFor(`actAs-${party}`);
  const submit = async (from: number, count: number): Promise<void> => {
    for (let seq = from; seq < from + count; seq++) {
      const res = await fetch(`http://127.0.0.1:${direct.port}/v2/commands/submit-and-wait`, {
        method: "POST",
        headers: { authorization: `Bearer ${token()}` },
        body: JSON.stringify(tickCommands(`completion-${seq}`, party, seq)),
      });
      assert.equal(res.status, 200, await res.text());
    }
  };

  it("keeps the socket and reopens the call from the last completion: no gap, no duplicate", async () => {
    const end = (await (
      await fetch(`http://127.0.0.1:${direct.port}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${token()}` },
      })
    ).json()) as { offset: number };
    const socket = new CompletionsSocket(gateway.port, token(), {
      parties: [party],
      beginExclusive: end.offset,
    });
    await submit(1, 2);
    await until(() => socket.commandIds.length === 2, { observed: () => String(socket) });
    const resumes = () =>
      gatewayMetric(
        `http://127.0.0.1:${gateway.port}`,
        "ledger_gateway_stream_resumes_total",
        `endpoint="${PATH}"`,
      );
    const resumesBefore = await resumes();

    const away = proxy.restart(3_000);
    await submit(3, 2);
    await away;
    await submit(5, 2);

    const expected = Array.from({ length: 6 }, (_, i) => `completion-${i + 1}`);
    await until(
      () => {
        if (socket.closedWith !== undefined) throw new Error(`the socket closed: ${socket}`);
        return socket.commandIds.length >= expected.length;
      },
      { observed: () => String(socket) },
    );
    assert.deepEqual(socket.commandIds, expected, String(socket));
    assert.deepEqual(socket.errors, [], String(socket));
    assert.ok((await resumes()) > resumesBefore, "the call was reopened");
    socket.close();
  });
});
