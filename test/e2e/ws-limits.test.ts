import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";

interface Ending {
  frames: Record<string, unknown>[];
  code: number;
  reason: string;
}

/** Opens /v2/updates, sends `first` (if any) once open, collects frames until the close. */
function socketEnding(stack: Stack, first?: string): Promise<Ending> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${stack.token}`,
    ]);
    const frames: Record<string, unknown>[] = [];
    socket.on("open", () => {
      if (first !== undefined) socket.send(first);
    });
    socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
    // A frame refused on its header ends the client's write with EPIPE/ECONNRESET.
    socket.on("error", () => undefined);
    socket.on("close", (code, reason) => resolve({ frames, code, reason: reason.toString() }));
  });
}

/** Issue 14 item 3, WebSocket part: a stream socket costs bounded time and memory before its query. */
describe("WebSocket query frame limits", () => {
  let stack: Stack;
  const logLines: Record<string, unknown>[] = [];

  before(async () => {
    const log = pino(
      { level: "info" },
      new Writable({
        write(chunk, _encoding, done) {
          logLines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
          done();
        },
      }),
    );
    stack = await startStack(
      [
        "--websocket-config.query-frame-timeout",
        "1s",
        "--websocket-config.max-query-frame-bytes",
        String(64 * 1024),
      ],
      {},
      { gatewayLog: log },
    );
  });
  after(() => stack.stop());

  // Bounded: on a gateway without the limit the socket stays open forever.
  it("ends a socket that sends no query frame with one INVALID_ARGUMENT frame, then close 1000", {
    timeout: 15_000,
  }, async () => {
    const ending = await socketEnding(stack);
    assert.equal(ending.frames.length, 1);
    assert.equal(ending.frames[0]?.code, "INVALID_ARGUMENT");
    assert.equal(ending.frames[0]?.grpcCodeValue, 3);
    assert.match(String(ending.frames[0]?.cause), /^No query frame within 1000 ms of the upgrade/);
    assert.equal(ending.code, 1000);
  });

  it("refuses a 16 MiB frame on its header: the connection is cut, nothing is answered, the reason is logged", async () => {
    const ending = await socketEnding(stack, "x".repeat(16 * 1024 * 1024));
    assert.deepEqual(ending.frames, []);
    assert.equal(ending.code, 1006);
    assert.ok(
      logLines.some((l) => l.msg === "WebSocket closed by uWS" && l.reason === "Received too big message"),
      "the gateway logs why it cut the connection",
    );
  });
});
