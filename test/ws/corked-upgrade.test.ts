import uWS from "uWebSockets.js";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { CorkedUpgrade } from "../../src/ws/corked-upgrade.js";

interface Data {
  name: string;
}

/** What the server saw of one upgrade made after a turn of the event loop. */
interface Seen {
  /** What `upgrade` answered: the socket, or undefined. */
  answered: "socket" | "none";
  /** `open` ran for it outside any CorkedUpgrade (it would then have done the open work itself). */
  openedOutside: boolean;
  data?: Data;
}

/**
 * CorkedUpgrade on a real uWS app: `open` hands the socket over and `upgrade` answers it once the
 * cork has returned, so that the open work runs after cork()'s check (see corked-upgrade.ts); a
 * socket closed inside the cork is answered as none. (Whether the upgrade loses sockets under
 * MALLOC_PERTURB_ is test/e2e/ws-admission.test.ts's, on the gateway.)
 */
describe("CorkedUpgrade", () => {
  const corked = new CorkedUpgrade<Data>();
  const seen: Seen[] = [];
  let listen: uWS.us_listen_socket;
  let url: string;
  /** Set by a test: `open` closes the socket at once, as uWS's faulty cork() would. */
  let closeInOpen = false;

  before(async () => {
    const app = uWS.App().ws<Data>("/*", {
      upgrade: (res, req, context) => {
        const headers = {
          key: req.getHeader("sec-websocket-key"),
          protocol: req.getHeader("sec-websocket-protocol"),
          extensions: req.getHeader("sec-websocket-extensions"),
          context,
        };
        const name = req.getUrl().slice(1);
        let aborted = false;
        res.onAborted(() => {
          aborted = true;
        });
        setImmediate(() => {
          if (aborted) return;
          const entry: Seen = { answered: "none", openedOutside: false };
          seen.push(entry);
          const ws = corked.upgrade(res, { name }, headers);
          if (ws === undefined) return;
          entry.answered = "socket";
          entry.data = { name: ws.getUserData().name };
          // The open work, now outside the cork: a first frame.
          ws.send(`hello ${ws.getUserData().name}`);
        });
      },
      open: (ws) => {
        if (!corked.handOver(ws)) {
          const last = seen.at(-1);
          if (last) last.openedOutside = true;
        }
        if (closeInOpen) ws.close();
      },
      close: (ws) => corked.closing(ws),
    });
    listen = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) => (socket ? resolve(socket) : reject(new Error("no listen")))),
    );
    url = `ws://127.0.0.1:${uWS.us_socket_local_port(listen)}`;
  });
  after(() => uWS.us_listen_socket_close(listen));

  it("answers the upgraded socket once the cork has returned, with its data, and it serves", async () => {
    assert.equal(corked.corking, true);
    const first = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`${url}/alice`, ["daml.ws.auth"]);
      socket.on("message", (data: Buffer) => {
        resolve(data.toString("utf8"));
        socket.close();
      });
      socket.on("error", reject);
    });
    assert.equal(first, "hello alice");
    assert.deepEqual(seen.at(-1), { answered: "socket", openedOutside: false, data: { name: "alice" } });
  });

  it("answers none for a socket closed inside the cork, whose close handler has run", async () => {
    closeInOpen = true;
    try {
      const code = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`${url}/bob`);
        socket.on("close", (closed) => resolve(closed));
        socket.on("error", () => undefined);
      });
      assert.equal(code, 1006);
      assert.deepEqual(seen.at(-1), { answered: "none", openedOutside: false });
    } finally {
      closeInOpen = false;
    }
  });

  it("upgrades uncorked once a socket was closed inside its cork, and still hands the socket over", async () => {
    // The test before closed one inside its cork.
    assert.equal(corked.corking, false);
    const first = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`${url}/carol`);
      socket.on("message", (data: Buffer) => {
        resolve(data.toString("utf8"));
        socket.close();
      });
      socket.on("error", reject);
    });
    assert.equal(first, "hello carol");
    assert.deepEqual(seen.at(-1), { answered: "socket", openedOutside: false, data: { name: "carol" } });
  });
});
