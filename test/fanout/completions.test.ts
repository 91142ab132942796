import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type FanoutStack, startFanoutStack, until } from "./fanout-stack.js";

const COMPLETIONS = "/v2/commands/completions";
const COMPLETION_STREAM = "CommandCompletionService/CompletionStream";

/** A completions frame: a completion or a checkpoint. */
interface CompletionFrame {
  completionResponse?: { Completion?: { value: { commandId: string; offset: number } } };
}

/** A completions subscriber: the command ids and offsets of its completions, in order. */
class CompletionReader {
  readonly commandIds: string[] = [];
  readonly offsets: number[] = [];
  readonly socket: WebSocket;
  readonly closed: Promise<number>;

  constructor(stack: FanoutStack, request: unknown) {
    this.socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${COMPLETIONS}`, [
      "daml.ws.auth",
      `jwt.token.${stack.token()}`,
    ]);
    this.socket.on("open", () => this.socket.send(JSON.stringify(request)));
    this.socket.on("message", (data: Buffer) => {
      const completion = (JSON.parse(data.toString("utf8")) as CompletionFrame).completionResponse?.Completion
        ?.value;
      if (completion === undefined) return;
      this.commandIds.push(completion.commandId);
      this.offsets.push(completion.offset);
    });
    this.closed = new Promise((resolve) => this.socket.on("close", (code) => resolve(code)));
  }

  close(): Promise<number> {
    this.socket.close(1000);
    return this.closed;
  }
}

describe("shared completion streams over real sockets", () => {
  let stack: FanoutStack;

  before(async () => {
    stack = await startFanoutStack([], { ticks: 0 });
  });
  after(() => stack.stop());

  it("serves N subscribers of one completion request from one ledger call, every completion in order", async () => {
    const N = 10;
    const request = {
      userId: `actAs-${stack.party}`,
      parties: [stack.party],
      beginExclusive: await stack.ledgerEnd(),
    };
    const splices = () => stack.joins(COMPLETIONS, "splice");
    const splicesBefore = await splices();
    const readers = Array.from({ length: N }, () => new CompletionReader(stack, request));
    // Completions have no empty range to be admitted with: each joiner's own call is its
    // admission, until it has caught up with the shared one and splices in.
    await until(() => stack.sandbox.calls.open(COMPLETION_STREAM) === N);

    const submitted: string[] = [];
    const commit = async (n: number) => {
      const before = await stack.ledgerEnd();
      await stack.more(n);
      const all = await completionIds(stack, request.userId, before);
      submitted.push(...all);
    };
    await commit(5);
    await until(async () => readers.every((r) => r.commandIds.length >= 5));
    await until(async () => (await splices()) - splicesBefore === N - 1);
    await until(() => stack.sandbox.calls.open(COMPLETION_STREAM) === 1);
    await commit(5);
    await until(async () => readers.every((r) => r.commandIds.length >= 10));

    assert.equal(submitted.length, 10);
    for (const reader of readers) {
      assert.deepEqual(reader.commandIds, submitted);
      assert.deepEqual(
        reader.offsets,
        [...reader.offsets].sort((a, b) => a - b),
      );
      assert.equal(new Set(reader.offsets).size, 10);
    }
    // The list twin's call that read the expected ids ends a moment after its answer.
    await until(() => stack.sandbox.calls.open(COMPLETION_STREAM) === 1);
    assert.equal(await stack.metric("ledger_gateway_fanout_upstreams", { endpoint: COMPLETIONS }), 1);
    assert.equal(
      await stack.metric("ledger_gateway_fanout_subscribers", { endpoint: COMPLETIONS, mode: "shared" }),
      N,
    );
    await Promise.all(readers.map((r) => r.close()));
    await until(() => stack.sandbox.calls.open(COMPLETION_STREAM) === 0);
  });
});

/** The command ids of the user's completions after `begin`, in ledger order (the list twin). */
async function completionIds(stack: FanoutStack, userId: string, begin: number): Promise<string[]> {
  const res = await fetch(`${stack.url}${COMPLETIONS}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.token()}` },
    body: JSON.stringify({ userId, parties: [stack.party], beginExclusive: begin }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as CompletionFrame[])
    .map((e) => e.completionResponse?.Completion?.value?.commandId as string | undefined)
    .filter((id): id is string => id !== undefined);
}
