import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { frameMessage } from "../../src/ledger/grpc-frame.js";
import { GrpcMessageReader } from "../../src/ledger/grpc-message-reader.js";

const MAX = 64 * 1024 * 1024;

/** Messages of the sizes given, each byte telling its message and position apart. */
const messagesOf = (sizes: number[]) =>
  sizes.map((size, m) => Buffer.from(Array.from({ length: size }, (_, i) => (m * 31 + i) & 0xff)));

const bodyOf = (messages: Buffer[]) => Buffer.concat(messages.map((m) => frameMessage(m, MAX) as Buffer));

/** `body` cut at `cuts` (ascending offsets) into chunks, read in order. */
function readInChunks(body: Buffer, cuts: number[]) {
  const reader = new GrpcMessageReader(MAX);
  const delivered: Buffer[] = [];
  let from = 0;
  for (const to of [...cuts, body.length]) {
    const error = reader.read(body.subarray(from, to), (message) => delivered.push(message));
    strictEqual(error, undefined);
    from = to;
  }
  return { delivered, midMessage: reader.midMessage };
}

/** A small deterministic generator, so that a failure can be replayed. */
function prng(seed: number) {
  let state = seed;
  return (bound: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % bound;
  };
}

describe("GrpcMessageReader", () => {
  const messages = messagesOf([0, 1, 4, 5, 300, 16_384, 70_000, 2, 0, 9]);
  const body = bodyOf(messages);

  it("cuts every message out of one chunk that holds them all, in order", () => {
    const { delivered, midMessage } = readInChunks(body, []);
    deepStrictEqual(delivered, messages);
    strictEqual(midMessage, false);
  });

  it("hands over a message inside one chunk as a view of that chunk, without a copy", () => {
    const reader = new GrpcMessageReader(MAX);
    const delivered: Buffer[] = [];
    reader.read(body, (message) => delivered.push(message));
    ok(delivered.every((message) => message.buffer === body.buffer));
  });

  it("joins messages split across chunks, at every position, one byte at a time included", () => {
    const oneByteChunks = Array.from({ length: body.length - 1 }, (_, i) => i + 1);
    deepStrictEqual(readInChunks(body, oneByteChunks).delivered, messages);
    // Every cut inside the first 400 bytes: inside prefixes, between them, inside messages.
    for (let cut = 1; cut < 400; cut++) deepStrictEqual(readInChunks(body, [cut]).delivered, messages);
  });

  it("reads any chunking of the body to the same messages (200 random ones)", () => {
    const random = prng(10);
    for (let run = 0; run < 200; run++) {
      const cuts = new Set<number>();
      const count = random(40);
      for (let i = 0; i < count; i++) cuts.add(1 + random(body.length - 1));
      const sorted = [...cuts].sort((a, b) => a - b);
      deepStrictEqual(readInChunks(body, sorted).delivered, messages, `cuts ${sorted.join(",")}`);
    }
  });

  it("tells a body that ends inside a message", () => {
    strictEqual(readInChunks(body.subarray(0, body.length - 1), []).midMessage, true);
    strictEqual(readInChunks(body.subarray(0, 3), []).midMessage, true);
  });

  it("refuses a compressed message (INTERNAL) and one over the limit (RESOURCE_EXHAUSTED) from their prefix", () => {
    const compressed = Buffer.from([1, 0, 0, 0, 1, 7]);
    const reader = new GrpcMessageReader(MAX);
    strictEqual(reader.read(compressed, () => {})?.code, grpc.status.INTERNAL);
    const small = new GrpcMessageReader(10);
    // The prefix alone, split: the limit is checked before a byte of the message is in.
    strictEqual(
      small.read(Buffer.from([0, 0, 0]), () => {}),
      undefined,
    );
    const error = small.read(Buffer.from([0, 11]), () => {});
    strictEqual(error?.code, grpc.status.RESOURCE_EXHAUSTED);
    strictEqual(error?.details, "Received message larger than max (11 vs. 10)");
  });
});
