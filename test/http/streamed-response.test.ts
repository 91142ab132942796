import uWS from "uWebSockets.js";
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { concat, from, NEVER, Observable, type Subscribable } from "rxjs";
import type { StreamedAnswer } from "../../src/endpoints/route.js";
import { writeStreamed } from "../../src/http/streamed-response.js";
import { until } from "../support/until.js";

/** An element; the writer frames it as an NDJSON line, a byte more. */
const ELEMENT = "x".repeat(256 * 1024 - 1);
const LINE = ELEMENT.length + 1;
/** 12 MiB: more than loopback's socket buffers hold (4 MiB sent, 6 MiB received at most). */
const BURST = 48;

/** What the server's chunks were, from the raw HTTP/1.1 answer (chunked transfer coding). */
function payloadOf(answer: string): string {
  const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  return body.replace(/\r\n[0-9a-f]+\r\n/g, "").replace(/^[0-9a-f]+\r\n/, "");
}

/**
 * The writer over a real socket, with sources that go quiet without ending: what the client gets
 * is exactly what the writer was given, though nothing is written after it.
 */
describe("a streamed answer's writer", () => {
  let listen: uWS.us_listen_socket;
  let port: number;
  let emitted = 0;
  let pauses = 0;
  const serve = (elements: StreamedAnswer["elements"]) => (res: uWS.HttpResponse) => {
    const abort = new AbortController();
    res.onAborted(() => abort.abort());
    const answer: StreamedAnswer = { kind: "stream", format: "ndjson", elements };
    const exchange = {
      res,
      signal: abort.signal,
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      closes: () => false,
      writeHead: () => res.writeStatus("200 OK"),
      fail: () => {},
      ended: () => {},
    };
    writeStreamed(exchange, answer, 1024 * 1024);
  };
  before(async () => {
    const app = uWS
      .App()
      // All at once, then quiet: one write the socket takes a third of.
      .get(
        "/burst",
        serve(() => {
          emitted = BURST * LINE;
          return concat(from(Array<string>(BURST).fill(ELEMENT)), NEVER);
        }),
      )
      // One chunk per turn while the writer wants more; quiet after the first pause.
      .get(
        "/paced",
        serve(
          (demand$: Subscribable<boolean>) =>
            new Observable<string>((subscriber) => {
              let ready = true;
              const demand = demand$.subscribe({
                next: (next: boolean) => {
                  if (ready && !next) pauses += 1;
                  ready = next;
                },
              });
              emitted = 0;
              const timer = setInterval(() => {
                if (!ready || pauses > 0) return;
                emitted += LINE;
                subscriber.next(ELEMENT);
              }, 0);
              return () => {
                clearInterval(timer);
                demand.unsubscribe();
              };
            }),
        ),
      );
    await new Promise<void>((resolve) =>
      app.listen("127.0.0.1", 0, (socket) => {
        listen = socket;
        port = uWS.us_socket_local_port(socket);
        resolve();
      }),
    );
  });
  after(() => uWS.us_listen_socket_close(listen));

  /** GETs `path` without reading until `ready`, then reads until the payload has `emitted` bytes. */
  async function readLate(path: string, ready: () => boolean): Promise<string> {
    const socket = net.connect(port, "127.0.0.1");
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause();
    await until(ready, { budgetMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (text: string) => {
      answer += text;
    });
    socket.resume();
    await until(() => payloadOf(answer).length >= emitted, { budgetMs: 5_000 }).catch(() => {});
    socket.destroy();
    return payloadOf(answer);
  }

  it("sends all of a write the socket refused once the client reads, with nothing written after it", async () => {
    const payload = await readLate("/burst", () => emitted > 0);
    assert.equal(payload.length, BURST * LINE);
  });

  it("pauses its source past the high-water mark and delivers all it had once the client reads", async () => {
    const payload = await readLate("/paced", () => pauses > 0);
    assert.ok(emitted > 4 * LINE, `${emitted} bytes emitted before the pause`);
    assert.equal(payload.length, emitted);
    assert.equal(pauses, 1);
  });
});
