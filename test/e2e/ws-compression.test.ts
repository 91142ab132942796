import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const TICKS = 40;

/** The frames of a bounded /v2/updates read, and the bytes its socket read off the wire. */
async function read(
  stack: Stack,
  party: string,
  end: number,
  options: { deflate: boolean; pauseMs?: number },
): Promise<{ frames: string[]; wire: number; text: number; extensions: string }> {
  const socket = new WebSocket(
    `${stack.url.replace(/^http/, "ws")}/v2/updates`,
    ["daml.ws.auth", `jwt.token.${tokenFor(`actAs-${party}`)}`],
    { perMessageDeflate: options.deflate },
  );
  const frames: string[] = [];
  socket.on("open", () => socket.send(JSON.stringify(updatesRequest(partyFilter(party), 0, end))));
  socket.on("message", (data: Buffer) => {
    frames.push(data.toString("utf8"));
    if (frames.length === 1 && options.pauseMs) {
      socket.pause();
      setTimeout(() => socket.resume(), options.pauseMs);
    }
  });
  const code = await new Promise<number>((resolve) => socket.on("close", resolve));
  assert.equal(code, 1000, frames.at(-1));
  const wire = (socket as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;
  const text = frames.reduce((sum, frame) => sum + Buffer.byteLength(frame), 0);
  return { frames, wire, text, extensions: socket.extensions };
}

async function ticks(stack: Stack): Promise<{ party: string; end: number }> {
  const allocated = await stack.request("/v2/parties", {
    method: "POST",
    body: JSON.stringify({ partyIdHint: "z" }),
  });
  const { party } = ((await allocated.json()) as { partyDetails: { party: string } }).partyDetails;
  let end = 0;
  for (let seq = 0; seq < TICKS; seq++) {
    const created = await stack.request("/v2/commands/submit-and-wait", {
      method: "POST",
      token: tokenFor(`actAs-${party}`),
      body: JSON.stringify(tickCommands(`deflate-${seq}-${Date.now()}`, party, seq)),
    });
    end = ((await created.json()) as { completionOffset: number }).completionOffset;
  }
  return { party, end };
}

/**
 * Issue 22 item 1: permessage-deflate, opt-in (websocket-config.compression on), for clients that
 * offer it. The bytes are counted where they are, on the client's TCP socket.
 */
describe("WebSocket compression with websocket-config.compression on", () => {
  let stack: Stack;
  let party: string;
  let end: number;
  before(async () => {
    stack = await startStack([
      "--websocket-config.compression",
      "on",
      "--websocket-config.high-water-mark",
      "4096",
      "--websocket-config.low-water-mark",
      "1024",
    ]);
    ({ party, end } = await ticks(stack));
  });
  after(() => stack.stop());

  it("deflates the frames of a client that offers it, the same JSON in under 0.6 of the bytes", async () => {
    const plain = await read(stack, party, end, { deflate: false });
    const deflated = await read(stack, party, end, { deflate: true });
    assert.equal(plain.frames.length, TICKS);
    assert.deepEqual(deflated.frames, plain.frames);
    assert.match(deflated.extensions, /permessage-deflate/);
    assert.equal(plain.extensions, "");
    // The sample ticks (1.3 KB of JSON each) deflate to 0.46 of their size one by one.
    assert.ok(
      deflated.wire < 0.6 * deflated.text,
      `${deflated.wire} bytes on the wire for ${deflated.text} of JSON`,
    );
    assert.ok(plain.wire >= plain.text, `${plain.wire} bytes on the wire for ${plain.text} of JSON`);
  });

  it("gets a client that stops reading every deflated frame, in order", async () => {
    const plain = await read(stack, party, end, { deflate: false });
    const paused = await read(stack, party, end, { deflate: true, pauseMs: 300 });
    assert.deepEqual(paused.frames, plain.frames);
  });
});

describe("WebSocket compression by default", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it("sends a client that offers permessage-deflate frames as Canton does", async () => {
    const { party, end } = await ticks(stack);
    const offered = await read(stack, party, end, { deflate: true });
    assert.equal(offered.frames.length, TICKS);
    assert.equal(offered.extensions, "");
    assert.ok(offered.wire >= offered.text);
  });
});
