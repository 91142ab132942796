import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";

/** Sockets opened in all; corked, about 1 in 200 would be shut down: 5 expected, none allowed. */
const SOCKETS = 1000;
/** How long each opened socket is watched: uWS's misread shuts a socket down within a few ms. */
const WATCH_MS = 300;

/**
 * uWebSockets.js 3.0.6 shuts some asynchronously upgraded sockets down right after they open when
 * the upgrade runs inside `res.cork` (uNetworking/uWebSockets#1929: cork() reads HTTP state from
 * the memory the upgrade reused; about 1 upgrade in 200 here). The gateway's upgrades are all
 * asynchronous (the ledger admits the caller first, and a paced one waits its turn) and are not
 * corked for that reason: this holds it to that, with enough upgrades that corking would fail it.
 */
describe("asynchronous WebSocket upgrades stay open (uWebSockets#1929)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it(`keeps every one of ${SOCKETS} upgraded sockets open after its open`, async () => {
    const url = `${stack.url.replace(/^http/, "ws")}/v2/updates`;
    const closes: number[] = [];
    const opened: WebSocket[] = [];
    // A few hundred at a time: a burst of 1,000 SYNs overflows a small listen backlog.
    for (let i = 0; i < SOCKETS; i += 200) {
      const batch = await Promise.all(
        Array.from(
          { length: Math.min(200, SOCKETS - i) },
          () =>
            new Promise<WebSocket>((resolve, reject) => {
              const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${stack.token}`]);
              socket.once("open", () => resolve(socket));
              socket.once("error", reject);
              socket.once("close", (code) => closes.push(code));
            }),
        ),
      );
      opened.push(...batch);
    }
    await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
    strictEqual(opened.length, SOCKETS);
    deepStrictEqual(closes, [], "sockets closed by the server right after their open");
    await Promise.all(
      opened.map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.once("close", () => resolve());
            socket.close(1000);
          }),
      ),
    );
  });
});
