import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RawConnection } from "../http/raw-http.js";
import { stackWithInFlight } from "../support/stack-in-flight.js";

/**
 * Longer than uWS's own HTTP timeout, which cuts a body arriving slower than 16 kB/s 8 to 12 s
 * after it began: the gateway's bound is the one that applies.
 */
const BODY_READ_TIMEOUT_S = 24;
/** Bounds each wait of a broken run: the body read timeout, and then some for a loaded machine. */
const WAIT_MS = (BODY_READ_TIMEOUT_S + 30) * 1000;

/**
 * Issue 35, finding F4: request bodies that arrive slowly, or stop, over a real socket. They were
 * cut by uWS some 10 s in, the connection closed without an answer, while the docs promised 408
 * REQUEST_BODY_TIMEOUT at server.body-read-timeout. A connection that sends nothing is still
 * closed: before its headers end by uWS (about 10 s), after them by server.body-read-timeout.
 */
describe("request bodies that arrive slowly (raw TCP)", { concurrency: true }, () => {
  const { stack } = stackWithInFlight(["--server.body-read-timeout", `${BODY_READ_TIMEOUT_S}s`]);

  const post = (contentLength: number) =>
    `POST /v2/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${stack().token}\r\nContent-Length: ${contentLength}\r\n\r\n`;

  /** uWS's cut closes the connection without an answer: the test fails then, not at its bound. */
  const answeredOrClosed = (connection: RawConnection) =>
    connection.until(
      "an answer or the close",
      () => connection.responses().length > 0 || connection.closed,
      WAIT_MS,
    );

  /** Writes `body` a few bytes at a time, every `everyMs`, until it is all sent or the connection closes. */
  const trickle = (connection: RawConnection, body: string, bytes: number, everyMs: number) => {
    let at = 0;
    const timer = setInterval(() => {
      if (connection.closed || at >= body.length) {
        clearInterval(timer);
        return;
      }
      connection.write(body.slice(at, at + bytes));
      at += bytes;
    }, everyMs);
    return () => clearInterval(timer);
  };

  it("reads a body that takes longer than uWS's timeout to arrive, and answers it", async () => {
    const body = JSON.stringify({ user: { id: "slow-body-user", primaryParty: "" }, rights: [] });
    const connection = await RawConnection.open(stack().gateway.port);
    connection.write(post(Buffer.byteLength(body)));
    // About 16 s for the whole body: past uWS's cut, within the gateway's bound.
    const stop = trickle(connection, body, Math.ceil(body.length / 16), 1000);
    await answeredOrClosed(connection);
    stop();
    const [response] = connection.responses();
    assert.equal(response?.status, 200, connection.text);
    assert.equal(JSON.parse(response?.body ?? "{}").user?.id, "slow-body-user");
    connection.destroy();
  });

  it("answers 408 REQUEST_BODY_TIMEOUT to a body still trickling at server.body-read-timeout, and closes", async () => {
    const connection = await RawConnection.open(stack().gateway.port);
    connection.write(post(1000));
    const stop = trickle(connection, "x".repeat(1000), 2, 1000);
    await answeredOrClosed(connection);
    stop();
    const [response] = connection.responses();
    assert.equal(response?.status, 408, connection.text);
    assert.equal(JSON.parse(response?.body ?? "{}").code, "REQUEST_BODY_TIMEOUT");
    await connection.untilClosed(WAIT_MS);
  });

  it("answers 408 REQUEST_BODY_TIMEOUT to a request whose body never starts, and closes", async () => {
    const connection = await RawConnection.open(stack().gateway.port);
    connection.write(post(100));
    await answeredOrClosed(connection);
    const [response] = connection.responses();
    assert.equal(response?.status, 408, connection.text);
    assert.equal(JSON.parse(response?.body ?? "{}").code, "REQUEST_BODY_TIMEOUT");
    await connection.untilClosed(WAIT_MS);
  });

  it("closes, without an answer, a connection whose headers never end (uWS's timeout)", async () => {
    const connection = await RawConnection.open(stack().gateway.port);
    connection.write("POST /v2/users HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const stop = trickle(connection, "X-Slow: 1\r\n".repeat(1000), 11, 1000);
    await connection.untilClosed(WAIT_MS);
    stop();
    assert.equal(connection.text, "");
  });
});
