import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import WebSocket from "ws";
import { COUNT_PATH, type CountJson } from "../fixtures/counter-endpoint.js";
import { tokenFor } from "../support/tokens.js";
import { type Harness, startHarness } from "../support/transport-harness.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const HIGH_WATER = 64 * 1024;
const LOW_WATER = 16 * 1024;
const HARD_LIMIT = 1024 * 1024;
const N = 1000;
const PAYLOAD = 8 * 1024;
const BURST = 10;
/**
 * The slow reader's longest pause per burst, whatever the producer's pace on a loaded machine:
 * a reader that truly stops for seconds at a time reads a few KB/s, while the gateway's socket
 * sees progress only when the kernel's send buffer (MBs) frees a third of itself, so a 100x
 * slower reader of a slow producer could meet the write deadline; 300 ms per 80 KB still keeps
 * it far slower than the producer.
 */
const MAX_PAUSE_MS = 300;

interface Run {
  seqs: number[];
  code: number;
  seconds: number;
}

/**
 * Reads the stream; with `pauseMs`, reads like a slow consumer: after every BURST frames the
 * client's TCP socket is paused for `pauseMs`, so the gateway's writes back up.
 */
function consume(
  h: Harness,
  query: CountJson,
  pauseMs = 0,
  onFrame?: (received: number) => void,
): Promise<Run> {
  const socket = new WebSocket(`${h.wsUrl}${COUNT_PATH}`, ["daml.ws.auth", `jwt.token.${tokenFor()}`]);
  const seqs: number[] = [];
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    socket.on("open", () => socket.send(JSON.stringify(query)));
    socket.on("message", (data) => {
      seqs.push((JSON.parse(data.toString()) as { seq: number }).seq);
      onFrame?.(seqs.length);
      if (pauseMs > 0 && seqs.length % BURST === 0) {
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    socket.on("error", reject);
    socket.on("close", (code) =>
      resolve({ seqs, code, seconds: Number(process.hrtime.bigint() - started) / 1e9 }),
    );
  });
}

async function elementsSent(h: Harness): Promise<number> {
  const metric = await h.metrics.streamElements.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

describe("a slow consumer (issue 4, must show)", () => {
  let h: Harness;

  before(async () => {
    h = await startHarness({
      // A write deadline well past what this reader's pace needs (see MAX_PAUSE_MS).
      limits: {
        highWaterMark: HIGH_WATER,
        lowWaterMark: LOW_WATER,
        hardLimit: HARD_LIMIT,
        writeDeadlineMs: 120_000,
      },
    });
  });
  after(() => h.stop());

  it("gets every element in order while the gateway holds bounded memory and the upstream call is paused", async (t) => {
    const query: CountJson = { count: N, payloadBytes: PAYLOAD };
    // The producer's pace: the same stream read flat out, same run.
    const fast = await consume(h, query);
    const fastRate = N / fast.seconds;
    // A pause per burst that makes the reader ~100x slower than that.
    const pauseMs = Math.min(MAX_PAUSE_MS, Math.max(1, Math.round((BURST * 1000 * 100) / fastRate)));
    const sentBefore = await elementsSent(h);
    const slowCall = h.counter.calls.length;

    gc();
    const heapBase = process.memoryUsage().heapUsed;
    const max = { buffered: 0, gatewayHeld: 0, clientLag: 0, heapGrowth: 0 };
    let received = 0;
    let sampling = true;
    const sampler = (async () => {
      let rounds = 0;
      while (sampling) {
        const call = h.counter.calls[slowCall];
        const sent = (await elementsSent(h)) - sentBefore;
        max.buffered = Math.max(max.buffered, h.ws.buffered());
        if (call !== undefined) {
          // Written by the gRPC server but not yet handed to the socket: what the gateway
          // (and the HTTP/2 window in front of it) holds.
          max.gatewayHeld = Math.max(max.gatewayHeld, call.written - sent);
          max.clientLag = Math.max(max.clientLag, call.written - received);
        }
        // Live heap, not garbage: collect before every few readings.
        if (++rounds % 20 === 0) {
          gc();
          max.heapGrowth = Math.max(max.heapGrowth, process.memoryUsage().heapUsed - heapBase);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const slow = await consume(h, query, pauseMs, (n) => {
      received = n;
    });
    sampling = false;
    await sampler;
    const call = h.counter.calls[slowCall];
    const pauses = (await h.metrics.wsBackpressurePauses.get()).values.reduce((s, v) => s + v.value, 0);
    const elementBytes = PAYLOAD + 40;
    const streamBytes = N * elementBytes;

    t.diagnostic(
      `producer (fast reader): ${Math.round(fastRate)} elements/s; slow reader: ${Math.round(N / slow.seconds)} elements/s ` +
        `(${(fastRate / (N / slow.seconds)).toFixed(0)}x slower, pause ${pauseMs} ms per ${BURST} frames)`,
    );
    t.diagnostic(
      `stream ${N} x ${elementBytes} B = ${(streamBytes / 2 ** 20).toFixed(1)} MiB; marks high ${HIGH_WATER} / low ${LOW_WATER} / hard ${HARD_LIMIT} B`,
    );
    t.diagnostic(
      `max socket buffered ${max.buffered} B; max written-not-sent ${max.gatewayHeld} elements ` +
        `(${((max.gatewayHeld * elementBytes) / 1024).toFixed(0)} KiB); max written-not-received ${max.clientLag} elements ` +
        `(incl. kernel socket buffers); max live heap growth ${(max.heapGrowth / 2 ** 20).toFixed(2)} MiB`,
    );
    t.diagnostic(
      `upstream: write() returned false ${call?.blockedTimes} times; gateway backpressure pauses ${pauses}`,
    );

    deepStrictEqual(slow.seqs, fast.seqs);
    deepStrictEqual(
      { count: slow.seqs.length, inOrder: slow.seqs.every((s, i) => s === i), code: slow.code },
      { count: N, inOrder: true, code: 1000 },
    );
    // Bounded: the socket never holds more than the hard limit; what the gateway holds beyond
    // it is the HTTP/2 window (the lean channel's 1 MiB per stream) plus
    // one read's batch, never the stream.
    ok(max.buffered <= HARD_LIMIT, `buffered ${max.buffered} > ${HARD_LIMIT}`);
    ok(max.gatewayHeld * elementBytes <= 2 * 2 ** 20, `held ${max.gatewayHeld} elements`);
    ok(max.heapGrowth < streamBytes / 2, `heap grew ${max.heapGrowth} B for a ${streamBytes} B stream`);
    // Observably paused: the server's writes were refused by flow control, and the gateway
    // turned demand off.
    ok((call?.blockedTimes ?? 0) > 0, "the upstream call was never held back");
    ok(pauses > 0, "the gateway never paused");
    strictEqual(call?.written, N);
  });
});
