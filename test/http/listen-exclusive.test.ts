import uWS from "uWebSockets.js";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { freePort } from "../../bench/lib/free-port.js";
import { loadConfig } from "../../src/config/load-config.js";
import { ListenError, type RunningGateway, startGateway } from "../../src/gateway.js";
import { listenExclusive, probeAddress } from "../../src/http/listen-exclusive.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { tokenFor } from "../support/tokens.js";

const silent = pino({ level: "silent" });
const IN_USE = "address already in use (another gateway or another process listens there)";

/**
 * A uWS app listening as uWS does by default: with SO_REUSEPORT, ready to share its port. On a
 * port named in advance: Linux does not let others join a port the kernel picked (port 0).
 */
async function sharingApp(): Promise<{ port: number; close(): void }> {
  const port = await freePort();
  const app = uWS.App();
  app.get("/*", (res) => {
    res.end("other");
  });
  return new Promise((resolve, reject) =>
    app.listen("127.0.0.1", port, (socket) => {
      if (!socket) return reject(new Error("no listen socket"));
      resolve({ port, close: () => uWS.us_listen_socket_close(socket) });
    }),
  );
}

describe("listening on an address of its own", () => {
  it("refuses a port that a uWS app shares by default (SO_REUSEPORT), which plain uWS would join", async () => {
    const other = await sharingApp();
    try {
      // The defect this guards against: a second default uWS listen succeeds and splits requests.
      const joiner = uWS.App();
      const joined = await new Promise<uWS.us_listen_socket | false>((resolve) =>
        joiner.listen("127.0.0.1", other.port, resolve),
      );
      assert.ok(joined, "this uWS build shares a port between default listeners");
      uWS.us_listen_socket_close(joined as uWS.us_listen_socket);

      const error = await probeAddress("127.0.0.1", other.port).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof ListenError);
      assert.equal(error.code, "EADDRINUSE");
      assert.equal(error.message, `cannot listen on 127.0.0.1:${other.port}: ${IN_USE}`);
      await assert.rejects(listenExclusive(uWS.App(), "127.0.0.1", other.port), ListenError);
    } finally {
      other.close();
    }
  });

  it("holds its port so that a default uWS listen cannot join it afterwards", async () => {
    const port = await freePort();
    const socket = await listenExclusive(uWS.App(), "127.0.0.1", port);
    try {
      const joiner = uWS.App();
      const joined = await new Promise<uWS.us_listen_socket | false>((resolve) =>
        joiner.listen("127.0.0.1", port, resolve),
      );
      assert.equal(joined, false);
    } finally {
      uWS.us_listen_socket_close(socket);
    }
  });

  it("names the address of an IPv6 listener in brackets", async () => {
    const holder = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      holder.once("error", () => resolve(false));
      holder.listen(0, "::1", () => resolve(true));
    });
    if (!bound) return; // no IPv6 loopback on this machine: nothing to name
    const port = (holder.address() as { port: number }).port;
    try {
      await assert.rejects(probeAddress("::1", port), {
        message: `cannot listen on [::1]:${port}: ${IN_USE}`,
      });
    } finally {
      holder.close();
    }
  });
});

describe("two gateways, one port", () => {
  let sandboxA: RunningSandbox;
  let sandboxB: RunningSandbox;
  let first: RunningGateway;
  before(async () => {
    sandboxA = await startSandbox({ port: 0 });
    sandboxB = await startSandbox({ port: 0 });
    // A port named in advance: one the kernel picked (0) is never shared, SO_REUSEPORT or not.
    first = await startGateway(
      loadConfig({ argv: ["--port", String(await freePort())], env: {} }),
      { host: "127.0.0.1", port: sandboxA.port },
      silent,
    );
  });
  after(async () => {
    await first.stop(100);
    await sandboxA.stop();
    await sandboxB.stop();
  });

  it("refuses the second with a ListenError, and every request stays with the first's ledger", async () => {
    const config = loadConfig({ argv: ["--port", String(first.port)], env: {} });
    await assert.rejects(startGateway(config, { host: "127.0.0.1", port: sandboxB.port }, silent), {
      name: "ListenError",
      code: "EADDRINUSE",
      message: `cannot listen on 127.0.0.1:${first.port}: ${IN_USE}`,
    });
    const sandboxAEnd = await fetch(`http://127.0.0.1:${first.port}/v2/state/ledger-end`, {
      headers: { authorization: `Bearer ${tokenFor()}` },
    }).then((r) => r.text());
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`http://127.0.0.1:${first.port}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${tokenFor()}` },
      });
      assert.equal(await res.text(), sandboxAEnd);
    }
  });
});
