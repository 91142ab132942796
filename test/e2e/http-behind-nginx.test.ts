import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { debianBinary } from "../deploy/debian-package.js";
import { type ShippedNginx, startShippedNginx } from "../deploy/shipped-nginx.js";
import { RawConnection } from "../http/raw-http.js";
import { type Stack, startStack } from "../support/stack.js";

const nginx = await debianBinary("nginx", "nginx");

/**
 * What uWS's native parser does wrong (see http-framing.test.ts) does not reach a gateway behind
 * deploy/nginx/ledger-json-gateway.conf as shipped (upstream and listen address replaced): nginx
 * parses the client's HTTP/1.1 itself and sends the gateway one request at a time.
 */
describe("the shipped nginx config in front of the gateway (raw TCP)", {
  skip: typeof nginx === "string" ? false : nginx.skip,
}, () => {
  let stack: Stack;
  let proxy: ShippedNginx | undefined;
  let port: number;
  before(async () => {
    stack = await startStack(["--path-prefix", "/api"]);
    proxy = await startShippedNginx(nginx as string, [stack.gateway.port], "/api/livez");
    port = proxy.port;
  });
  after(async () => {
    await proxy?.stop();
    await stack?.stop();
  });

  const version = () =>
    `GET /api/v2/version HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${stack.token}\r\n\r\n`;

  it("answers pipelined requests, in order", async () => {
    const connection = await RawConnection.open(port);
    connection.write(version() + version() + version());
    await connection.untilResponses(3);
    assert.deepEqual(
      connection.responses().map((response) => response.status),
      [200, 200, 200],
    );
    connection.destroy();
  });

  it("passes on a request line uWS would refuse with 505 in its normal form", async () => {
    const connection = await RawConnection.open(port);
    connection.write(version().replace("GET /api", "GET  /api"));
    await connection.untilResponses(1);
    assert.equal(connection.responses()[0]?.status, 200);
    connection.destroy();
  });

  it("answers a request line that is no HTTP with 400", async () => {
    const connection = await RawConnection.open(port);
    connection.write("GARBAGE\r\n\r\n");
    await connection.untilClosed();
    assert.match(connection.text, /^HTTP\/1\.1 400 /);
  });

  it("serves HTTP/1.0 clients, which uWS refuses with 505", async () => {
    const connection = await RawConnection.open(port);
    connection.write(`GET /api/livez HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`);
    await connection.untilClosed();
    assert.match(connection.text, /^HTTP\/1\.1 200 /);
  });

  it("answers a request target longer than its header buffers with 414, where uWS answers 505", async () => {
    const connection = await RawConnection.open(port);
    connection.write(`GET /api/v2/users/${"a".repeat(200_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await connection.untilClosed();
    assert.match(connection.text, /^HTTP\/1\.1 414 /);
  });

  it("answers a malformed header name with 400 at once, where uWS holds the connection unanswered", async () => {
    const connection = await RawConnection.open(port);
    connection.write(
      `GET /api/livez HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\nConnection: close\r\n\r\n`,
    );
    await connection.untilClosed();
    assert.match(connection.text, /^HTTP\/1\.1 400 /);
  });

  it("refuses conflicting Content-Length headers itself", async () => {
    const connection = await RawConnection.open(port);
    connection.write(
      `POST /api/v2/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}${version()}`,
    );
    await connection.untilClosed();
    assert.match(connection.text, /^HTTP\/1\.1 400 /);
    assert.ok(!connection.text.includes('"version"'), connection.text);
  });
});
