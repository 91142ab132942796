/**
 * The storm scenario's reference (issue 39: "a subscriber's start at most twice what
 * uWebSockets.js itself costs"): a bare uWebSockets.js app that does for each socket only what a
 * subscriber's start must: the upgrade, after an asynchronous step (the gateway's admission
 * answers in a later turn) and inside a cork (as uWS asks), and on the socket's first frame (its
 * query) the frames the gateway answered that query with, corked into one write. Nothing is
 * parsed, authorized or shared. Run against the same crowd as the gateway, on the same cores and
 * within minutes of it, its CPU per start is what the gateway's is measured against: the machine's
 * speed, which swings by a third between hours here, divides out.
 * One JSON job line on stdin, one JSON line on stdout (bench/lib/processes.ts startBenchClient):
 *   {"kind":"serve","frames":[...]}  listens on a free port with those frames: {"port"}
 */

import uWS from "uWebSockets.js";
import { createInterface } from "node:readline";

interface Job {
  kind: "serve";
  frames: string[];
}

interface SocketData {
  answered?: true;
}

/** The subprotocol the gateway (and Canton) answers a `daml.ws.auth, jwt.token.…` offer with. */
const PROTOCOL = "daml.ws.auth";

function serve(frames: readonly string[]): Promise<number> {
  const app = uWS.App().ws<SocketData>("/*", {
    idleTimeout: 0,
    compression: uWS.DISABLED,
    upgrade: (res, req, context) => {
      const key = req.getHeader("sec-websocket-key");
      const extensions = req.getHeader("sec-websocket-extensions");
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      setImmediate(() => {
        if (aborted) return;
        res.cork(() => res.upgrade<SocketData>({}, key, PROTOCOL, extensions, context));
      });
    },
    message: (ws) => {
      const data = ws.getUserData();
      if (data.answered) return;
      data.answered = true;
      ws.cork(() => {
        for (const frame of frames) ws.send(frame, false);
      });
    },
  });
  return new Promise<number>((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) =>
      socket === false
        ? reject(new Error("the bare server could not listen"))
        : resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket)),
    ),
  );
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const job = JSON.parse(line) as Job;
  process.stdout.write(`${JSON.stringify({ port: await serve(job.frames) })}\n`);
}
// stdin ended (the bench stops its clients so): the sockets left open must not keep it alive.
process.exit(0);
