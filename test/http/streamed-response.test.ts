import uWS from "uWebSockets.js";
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { Observable } from "rxjs";
import type { StreamedAnswer } from "../../src/endpoints/route.js";
import { writeStreamed } from "../../src/http/streamed-response.js";
import { until } from "../support/until.js";

const CHUNK = `${"x".repeat(256 * 1024 - 1)}\n`;

/**
 * The writer over a real socket, with a source that emits while the writer asks for more and
 * then goes quiet without ending: what the client gets is exactly what the writer was given.
 */
describe("a streamed answer's writer", () => {
  let app: uWS.TemplatedApp;
  let listen: uWS.us_listen_socket;
  let port: number;
  let emitted = 0;
  let pauses = 0;
  before(async () => {
    app = uWS.App().get("/*", (res) => {
      const abort = new AbortController();
      res.onAborted(() => abort.abort());
      const answer: StreamedAnswer = {
        kind: "stream",
        contentType: "application/x-ndjson",
        errorChunk: () => "error\n",
        chunks: (demand$) =>
          new Observable<string>((subscriber) => {
            let ready = true;
            const demand = demand$.subscribe((next) => {
              if (ready && !next) pauses += 1;
              ready = next;
            });
            // One chunk per turn while the writer wants more; quiet (not ended) after the first pause.
            const timer = setInterval(() => {
              if (!ready || pauses > 0) return;
              emitted += CHUNK.length;
              subscriber.next(CHUNK);
            }, 0);
            return () => {
              clearInterval(timer);
              demand.unsubscribe();
            };
          }),
      };
      writeStreamed(
        {
          res,
          signal: abort.signal,
          closes: () => false,
          writeHead: () => res.writeStatus("200 OK"),
          fail: () => {},
          ended: () => {},
        },
        answer,
      );
    });
    await new Promise<void>((resolve) =>
      app.listen("127.0.0.1", 0, (socket) => {
        listen = socket;
        port = uWS.us_socket_local_port(socket);
        resolve();
      }),
    );
  });
  after(() => uWS.us_listen_socket_close(listen));

  it("pauses its source at the socket's backpressure and delivers all it had once the client reads", async () => {
    const socket = net.connect(port, "127.0.0.1");
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    socket.pause();
    let body = "";
    let bodyStart = -1;
    // Paused until the source has gone quiet: the writer holds what the socket did not take.
    await until(() => pauses > 0, { budgetMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.setEncoding("latin1");
    socket.on("data", (text: string) => {
      body += text;
      if (bodyStart < 0) bodyStart = body.indexOf("\r\n\r\n") + 4;
    });
    socket.resume();
    // Every chunk arrives whole, though nothing was written after the pause: what the socket had
    // refused went out when it became writable.
    const payload = () =>
      body
        .slice(bodyStart)
        .replace(/\r\n[0-9a-f]+\r\n/g, "")
        .replace(/^[0-9a-f]+\r\n/, "");
    await until(() => bodyStart > 0 && payload().length >= emitted, { budgetMs: 5_000 }).catch(() => {});
    socket.destroy();
    assert.ok(emitted > 4 * CHUNK.length, `${emitted} bytes emitted before the pause`);
    assert.equal(payload().length, emitted);
    assert.equal(pauses, 1);
  });
});
