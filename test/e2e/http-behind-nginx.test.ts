import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot } from "../../src/proto/project-root.js";
import { debianBinary, freePort } from "../deploy/debian-package.js";
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
  let proxy: ChildProcess | undefined;
  let dir: string;
  let port: number;
  before(async () => {
    stack = await startStack(["--path-prefix", "/api"]);
    dir = mkdtempSync(join(tmpdir(), "nginx-http-"));
    chmodSync(dir, 0o777);
    port = await freePort();
    const shipped = readFileSync(join(projectRoot(), "deploy", "nginx", "ledger-json-gateway.conf"), "utf8");
    const servers = /^( +)server 127\.0\.0\.1:7575;\n +server 127\.0\.0\.1:7576;$/m;
    const listen = /^( +)listen 80;$/m;
    assert.match(shipped, servers);
    assert.match(shipped, listen);
    writeFileSync(
      join(dir, "gateway.conf"),
      shipped
        .replace(servers, (_, indent: string) => `${indent}server 127.0.0.1:${stack.gateway.port};`)
        .replace(listen, (_, indent: string) => `${indent}listen 127.0.0.1:${port};`),
    );
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        "worker_processes 1;",
        `pid ${dir}/nginx.pid;`,
        `error_log ${dir}/error.log warn;`,
        "daemon off;",
        "events { worker_connections 64; }",
        "http {",
        `  access_log ${dir}/access.log;`,
        ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${dir}/${t};`),
        `  include ${dir}/gateway.conf;`,
        "}",
      ].join("\n"),
    );
    proxy = spawn(nginx as string, ["-p", dir, "-e", `${dir}/error.log`, "-c", `${dir}/nginx.conf`], {
      stdio: "ignore",
    });
    const deadline = Date.now() + 20_000;
    while ((await fetch(`http://127.0.0.1:${port}/api/livez`).catch(() => undefined))?.status !== 200) {
      if (proxy.exitCode !== null || Date.now() > deadline) throw new Error("nginx did not serve");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  after(async () => {
    if (proxy && proxy.exitCode === null) {
      proxy.kill("SIGQUIT");
      await once(proxy, "exit");
    }
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
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
