import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";

const WALLET = "https://wallet.example";

/** A raw HTTP exchange (node:http: fetch keeps `Origin` to itself). */
function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * A WebSocket upgrade of /v2/updates: "open" when it stays open for the query, the HTTP status it
 * was refused with, or (refused on the socket, as a browser's is) its error frame's code and close.
 */
function upgrade(stack: Stack, origin: string | undefined): Promise<"open" | number | string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(
      `${stack.url.replace(/^http/, "ws")}/v2/updates`,
      ["daml.ws.auth", `jwt.token.${stack.token}`],
      {
        ...(origin ? { origin } : {}),
      },
    );
    let frame = "";
    socket.on("message", (data: Buffer) => {
      frame = (JSON.parse(data.toString("utf8")) as { code: string }).code;
    });
    socket.on("close", (code, reason) => resolve(`${frame} ${code} ${reason.toString()}`));
    // Refused sockets close at once; one that is still open after its upgrade was accepted.
    socket.on("open", () =>
      setTimeout(() => {
        if (socket.readyState !== WebSocket.OPEN) return;
        socket.close(1000);
        resolve("open");
      }, 300),
    );
    socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    socket.on("error", () => undefined);
  });
}

const preflight = (stack: Stack, origin: string) =>
  exchange(`${stack.url}/v2/updates`, "OPTIONS", {
    origin,
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type",
  });

/** Issue 22 item 4: CORS for browsers, nothing allowed unless configured. */
describe("CORS with server.cors.allowed-origins set", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--server.cors.allowed-origins", `${WALLET}, http://localhost:3000`]);
  });
  after(() => stack.stop());

  it("answers a listed origin's preflight with what it may send", async () => {
    const answer = await preflight(stack, WALLET);
    assert.equal(answer.status, 204, answer.body);
    assert.equal(answer.headers["access-control-allow-origin"], WALLET);
    assert.equal(answer.headers["access-control-allow-methods"], "GET, POST, PUT, PATCH, DELETE");
    assert.equal(
      answer.headers["access-control-allow-headers"],
      "Authorization, Content-Type, Last-Event-ID, traceparent, tracestate",
    );
    assert.equal(answer.headers["access-control-max-age"], "600");
    assert.equal(answer.headers.vary, "Origin");
  });

  it("refuses another origin's preflight with 403 and no CORS headers", async () => {
    const answer = await preflight(stack, "https://evil.example");
    assert.equal(answer.status, 403);
    assert.equal(answer.headers["access-control-allow-origin"], undefined);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, "CORS_ORIGIN_NOT_ALLOWED");
  });

  it("marks answers to a listed origin's requests, errors included, and no one else's", async () => {
    const get = (origin: string, path = "/v2/version") =>
      exchange(`${stack.url}${path}`, "GET", { origin, authorization: `Bearer ${stack.token}` });
    const listed = await get("http://localhost:3000");
    assert.equal(listed.status, 200);
    assert.equal(listed.headers["access-control-allow-origin"], "http://localhost:3000");
    assert.equal(listed.headers["access-control-expose-headers"], "Canton-Package-Hash, Ledger-Package-Hash");
    const missing = await get(WALLET, "/v2/no-such-route");
    assert.equal(missing.status, 404);
    assert.equal(missing.headers["access-control-allow-origin"], WALLET);
    // Served (the token decides what it may do), but a browser will not let the page read it.
    const other = await get("https://evil.example");
    assert.equal(other.status, 200);
    assert.equal(other.headers["access-control-allow-origin"], undefined);
  });

  it("upgrades WebSockets from a listed origin or none, and refuses another origin on the socket (4403)", async () => {
    assert.equal(await upgrade(stack, WALLET), "open");
    assert.equal(await upgrade(stack, undefined), "open");
    // A browser never sees a refused upgrade's status: the page reads the frame and the close.
    assert.equal(
      await upgrade(stack, "https://evil.example"),
      "CORS_ORIGIN_NOT_ALLOWED 4403 forbidden origin",
    );
  });
});

describe("CORS by default", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it("answers no preflight, marks no answer and checks no WebSocket origin", async () => {
    const answer = await preflight(stack, WALLET);
    assert.notEqual(answer.status, 204);
    assert.equal(answer.headers["access-control-allow-origin"], undefined);
    const get = await exchange(`${stack.url}/v2/version`, "GET", {
      origin: WALLET,
      authorization: `Bearer ${stack.token}`,
    });
    assert.equal(get.headers["access-control-allow-origin"], undefined);
    assert.equal(await upgrade(stack, "https://evil.example"), "open");
  });
});
