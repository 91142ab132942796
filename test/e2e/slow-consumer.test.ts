import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import WebSocket from "ws";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const TICKS = 2000;
const PAYLOAD = 8 * 1024;
const BURST = 10;
const PAUSE_MS = 40;

/**
 * The slow consumer on the real stack: the sandbox's update stream of preloaded 8 KiB ticks,
 * through the gateway's WebSocket, to a client that reads in bursts and then stops reading
 * (its TCP socket paused). The gateway must pause the ledger call instead of holding the
 * stream (16 MiB here) in memory, and deliver every element in order.
 */
describe("a slow consumer of the real update stream", () => {
  let stack: Stack;
  let token: string;
  let request: unknown;

  const read = (pauseMs: number, onFrame?: () => void): Promise<{ seqs: number[]; code: number }> =>
    new Promise((resolve, reject) => {
      const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
        "daml.ws.auth",
        `jwt.token.${token}`,
      ]);
      const seqs: number[] = [];
      socket.on("open", () => socket.send(JSON.stringify(request)));
      socket.on("message", (data: Buffer) => {
        const tx = JSON.parse(data.toString("utf8")).update.Transaction.value;
        seqs.push(Number(tx.events[0].CreatedEvent.createArgument.seq));
        onFrame?.();
        if (pauseMs > 0 && seqs.length % BURST === 0) pauseReading(socket, pauseMs);
      });
      socket.on("close", (code) => resolve({ seqs, code }));
      socket.on("error", reject);
    });

  before(async () => {
    ({ stack, token, request } = await preloadedStack("slow", [
      "--websocket-config.high-water-mark",
      String(64 * 1024),
      "--websocket-config.low-water-mark",
      String(16 * 1024),
    ]));
  });
  after(() => stack.stop());

  it("gets every element in order while the gateway pauses the ledger and holds bounded memory", async (t) => {
    // A first read at full speed fills the sandbox's encoded-transaction cache, so that the
    // heap growth measured below is what the stream costs, not what the ledger caches.
    const fast = await read(0);
    assert.equal(fast.seqs.length, TICKS);

    const pausesBefore = await backpressurePauses(stack);
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = 0;
    let frames = 0;
    const slow = await read(PAUSE_MS, () => {
      if (++frames % 200 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
      }
    });
    const pauses = (await backpressurePauses(stack)) - pausesBefore;
    t.diagnostic(
      `slow read: ${slow.seqs.length} elements, ${pauses} backpressure pauses, peak live heap growth ${(peak / 2 ** 20).toFixed(2)} MiB of a ${((TICKS * PAYLOAD) / 2 ** 20).toFixed(0)} MiB stream`,
    );

    assert.deepEqual(
      slow.seqs,
      Array.from({ length: TICKS }, (_, i) => i + 1),
    );
    assert.equal(slow.code, 1000);
    assert.ok(pauses > 0, "the gateway paused the ledger call");
    // The whole stream is 16 MiB; holding it would show here.
    assert.ok(peak < 4 * 2 ** 20, `live heap grew by ${peak} bytes`);
  });
});

/**
 * A stack whose sandbox preloaded TICKS ticks of PAYLOAD bytes for `owner`, with these gateway
 * flags; the owner's token and the query frame of its whole update stream.
 */
async function preloadedStack(
  owner: string,
  gatewayArgs: string[],
): Promise<{ stack: Stack; token: string; request: unknown }> {
  const stack = await startStack(
    gatewayArgs,
    {},
    { sandbox: { preload: { ticks: TICKS, payloadBytes: PAYLOAD, party: owner } } },
  );
  const { participantId } = (await (await stack.request("/v2/parties/participant-id")).json()) as {
    participantId: string;
  };
  // The preload allocates its owner on the participant's own namespace.
  const party = `${owner}::${participantId.split("::")[1]}`;
  const end = ((await (await stack.request("/v2/state/ledger-end")).json()) as { offset: number }).offset;
  return { stack, token: tokenFor(`actAs-${party}`), request: updatesRequest(partyFilter(party), 0, end) };
}

/**
 * Stops reading the socket for `ms`: its receive window fills, as a slow reader's does. ws's own
 * pause: pausing its TCP socket directly is undone by ws's flow control when its parser drains.
 */
function pauseReading(socket: WebSocket, ms: number): void {
  socket.pause();
  setTimeout(() => socket.resume(), ms);
}

function backpressurePauses(stack: Stack): Promise<number> {
  return gatewayMetric(stack.url, "ledger_gateway_ws_backpressure_pauses_total");
}

/**
 * The write deadline, and a stall longer than it and uWS's own timeout after end() (4 s, swept
 * every 4 s: the old code's socket was cut within 12 s), shorter than the deadline the gateway
 * gives the client to read its last frame (16 s): margins of 2 s for a loaded machine.
 */
const DEADLINE_S = 8;
const STALL_MS = 14_000;

/**
 * Issue 14 item 2: a client that stops reading for longer than the write deadline is
 * disconnected as a slow consumer, but must still get the JSON_API_SLOW_CONSUMER frame when it
 * reads again, naming the last element it got, and the gateway must count as delivered only
 * what the client can have read.
 */
describe("a consumer stalled past the write deadline", () => {
  let stack: Stack;
  let token: string;
  let request: unknown;

  before(async () => {
    ({ stack, token, request } = await preloadedStack("stalled", [
      // Default water marks: a paused stream keeps up to 1 MiB in uWS's own buffer.
      "--websocket-config.write-deadline",
      `${DEADLINE_S}s`,
    ]));
  });
  after(() => stack.stop());

  it("gets every element up to the slow-consumer frame, which names the last one it got, then close 1008", {
    timeout: 60_000,
  }, async () => {
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    const offsets: number[] = [];
    const seqs: number[] = [];
    let errorFrame: { code: string; context: Record<string, string> } | undefined;
    const closed = new Promise<number>((resolve, reject) => {
      socket.on("open", () => socket.send(JSON.stringify(request)));
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString("utf8"));
        if (frame.update === undefined) {
          errorFrame = frame;
          return;
        }
        const tx = frame.update.Transaction.value;
        offsets.push(tx.offset);
        seqs.push(Number(tx.events[0].CreatedEvent.createArgument.seq));
        if (seqs.length === 50) pauseReading(socket, STALL_MS);
      });
      socket.on("close", (code) => resolve(code));
      socket.on("error", reject);
    });
    const code = await closed;
    const sent = await streamElementsSent(stack);

    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i + 1),
    );
    assert.ok(seqs.length < TICKS, "the stall ended the stream early");
    assert.equal(errorFrame?.code, "JSON_API_SLOW_CONSUMER");
    assert.equal(errorFrame?.context.resume_after_offset, String(offsets.at(-1)));
    assert.equal(errorFrame?.context.elements_delivered, String(seqs.length));
    assert.equal(code, 1008);
    // What the gateway counts as sent is what the client got: nothing counted was lost.
    assert.equal(sent, seqs.length);
  });
});

function streamElementsSent(stack: Stack): Promise<number> {
  return gatewayMetric(stack.url, "ledger_gateway_stream_elements_sent_total", 'transport="ws"');
}

/**
 * Issue 20 item 6, the early 1006: a stream's last frames can sit in the kernel's socket buffers
 * after uWS's own buffer is empty. The gateway used to end the socket then, and uWS cuts an ended
 * socket after 4 s (swept every 4 s); anything the client sent later (a keep-alive pong, a
 * renewal frame) met a closed socket, and its RST made the client's kernel discard the frames it
 * had not read: close 1006 with its last elements lost, while the gateway counted them all
 * delivered and logged a normal close. Now the gateway closes once the pong to a ping sent after
 * the last frame says the client read everything.
 */
describe("a client that reads a finished stream's last frames late", () => {
  const FEW = 60;
  let stack: Stack;
  let token: string;
  let request: { endInclusive: number };

  before(async () => {
    const preloaded = await preloadedStack("late", []);
    ({ stack, token } = preloaded);
    request = preloaded.request as { endInclusive: number };
  });
  after(() => stack.stop());

  it("gets every element and close 1000 after the gateway has nothing left to send", {
    timeout: 60_000,
  }, async () => {
    // FEW ticks of 8 KiB (480 KiB): more than the client's receive buffer holds before it reads
    // (128 KiB by default), less than the kernel's buffers on both sides do, so the gateway's
    // part ends up in its kernel's send queue, which the RST discarded.
    const end = request.endInclusive - TICKS + FEW;
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    const seqs: number[] = [];
    const closed = new Promise<number>((resolve, reject) => {
      socket.on("open", () => socket.send(JSON.stringify({ ...request, endInclusive: end })));
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString("utf8"));
        seqs.push(Number(frame.update.Transaction.value.events[0].CreatedEvent.createArgument.seq));
        if (seqs.length === 1) socket.pause();
      });
      socket.on("close", (code) => resolve(code));
      socket.on("error", reject);
    });
    // Longer than uWS's timeout after end() (4 to 8 s): the old code's socket was closed by now.
    // Only the old code's failure needs this wait; the outcome never depends on it.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    // A client frame after the end (the gateway ignores frames after the query).
    socket.send("{}");
    socket.resume();
    const code = await closed;
    assert.deepEqual([seqs, code], [Array.from({ length: FEW }, (_, i) => i + 1), 1000]);
  });
});
