import assert from "node:assert/strict";
import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";

/** An echo server, and the sockets it accepted with how each ended. */
async function echoServer(): Promise<{ server: Server; port: number; ends: Promise<string>[] }> {
  const ends: Promise<string>[] = [];
  const server = createServer((socket) => {
    socket.on("data", (chunk) => socket.write(chunk));
    socket.on("end", () => socket.end());
    ends.push(
      new Promise((resolve) => {
        socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        socket.on("close", () => resolve("close"));
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as { port: number }).port, ends };
}

/** A client socket and everything it has received so far. */
interface Client {
  socket: Socket;
  received(): string;
  /** Resolves once what it received ends with `text`. */
  echo(text: string): Promise<void>;
  /** How it ended: an error code, or "close". */
  ended: Promise<string>;
}

async function connect(port: number): Promise<Client> {
  const socket = createConnection({ port, host: "127.0.0.1" });
  let received = "";
  const waiters: (() => void)[] = [];
  socket.on("data", (chunk) => {
    received += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  const ended = new Promise<string>((resolve) => {
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.on("close", () => resolve("close"));
  });
  const how = await new Promise<string>((resolve) => {
    socket.once("connect", () => resolve("connect"));
    void ended.then(resolve);
  });
  if (how !== "connect") throw new Error(`connect failed: ${how}`);
  const echo = (text: string): Promise<void> =>
    received.endsWith(text)
      ? Promise.resolve()
      : new Promise((resolve) => waiters.push(() => echo(text).then(resolve)));
  return { socket, received: () => received, echo, ended };
}

/** How a connection attempt to `port` ends: "connect" or an error code. */
async function tryConnect(port: number): Promise<string> {
  const socket = createConnection({ port, host: "127.0.0.1" });
  const outcome = await new Promise<string>((resolve) => {
    socket.on("connect", () => resolve("connect"));
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
  socket.destroy();
  return outcome;
}

/** Long enough for bytes to cross loopback many times over; for proving that none did. */
const QUIET_MS = 300;
const quiet = () => new Promise((resolve) => setTimeout(resolve, QUIET_MS));

describe("the fault proxy over real sockets", () => {
  let target: Awaited<ReturnType<typeof echoServer>>;
  let proxy: FaultProxy;

  before(async () => {
    target = await echoServer();
    proxy = await startFaultProxy({ targetPort: target.port });
  });
  after(async () => {
    await proxy.close();
    target.server.close();
  });

  it("forwards bytes both ways and counts them and the connections", async () => {
    const before = { to: proxy.bytesToTarget, from: proxy.bytesFromTarget, accepted: proxy.accepted };
    const client = await connect(proxy.port);
    client.socket.write("hello");
    await client.echo("hello");
    assert.equal(proxy.bytesToTarget - before.to, 5);
    assert.equal(proxy.bytesFromTarget - before.from, 5);
    assert.equal(proxy.accepted - before.accepted, 1);
    assert.equal(proxy.connections, 1);
    client.socket.end();
    assert.equal(await client.ended, "close");
    assert.equal(proxy.connections, 0);
  });

  it("reset() ends every connection with an RST on both sides", async () => {
    const clients = [await connect(proxy.port), await connect(proxy.port)];
    for (const client of clients) client.socket.write("x");
    await Promise.all(clients.map((client) => client.echo("x")));
    const targetEnds = target.ends.slice(-2);
    proxy.reset();
    assert.deepEqual(await Promise.all(clients.map((client) => client.ended)), ["ECONNRESET", "ECONNRESET"]);
    assert.deepEqual(await Promise.all(targetEnds), ["ECONNRESET", "ECONNRESET"]);
    assert.equal(proxy.connections, 0);
  });

  it("blackhole(true) holds every byte and new connections unanswered; blackhole(false) lets them flow", async () => {
    const open = await connect(proxy.port);
    open.socket.write("a");
    await open.echo("a");
    const forwarded = proxy.bytesToTarget;
    proxy.blackhole(true);
    open.socket.write("b");
    const opened = await connect(proxy.port);
    opened.socket.write("c");
    await quiet();
    assert.equal(open.received(), "a");
    assert.equal(opened.received(), "");
    assert.equal(proxy.bytesToTarget, forwarded, "bytes crossed the black hole");
    proxy.blackhole(false);
    await Promise.all([open.echo("ab"), opened.echo("c")]);
    open.socket.destroy();
    opened.socket.destroy();
  });

  it("stall(ms) delays bytes written meanwhile until it resolves, and loses none", async () => {
    const client = await connect(proxy.port);
    const stalled = proxy.stall(QUIET_MS);
    client.socket.write("during");
    let resumed = false;
    const arrived = client.echo("during").then(() => resumed);
    await stalled;
    resumed = true;
    assert.equal(await arrived, true, "the bytes arrived before the stall ended");
    client.socket.destroy();
  });

  it("refuse() closes the port to new connections, keeps open ones, and accept() reopens the same port", async () => {
    const open = await connect(proxy.port);
    await proxy.refuse();
    assert.equal(await tryConnect(proxy.port), "ECONNREFUSED");
    open.socket.write("still");
    await open.echo("still");
    await proxy.accept();
    const again = await connect(proxy.port);
    again.socket.write("back");
    await again.echo("back");
    open.socket.destroy();
    again.socket.destroy();
  });

  it("restart(downMs) resets open connections, refuses while down, then accepts on the same port", async () => {
    const open = await connect(proxy.port);
    const restarted = proxy.restart(1_500);
    assert.equal(await open.ended, "ECONNRESET");
    assert.equal(await tryConnect(proxy.port), "ECONNREFUSED");
    await restarted;
    const again = await connect(proxy.port);
    again.socket.write("up");
    await again.echo("up");
    again.socket.destroy();
  });

  it("resets a client whose target refuses the connection", async () => {
    const dead = await echoServer();
    const deadPort = dead.port;
    await new Promise((resolve) => dead.server.close(resolve));
    const orphan = await startFaultProxy({ targetPort: deadPort });
    try {
      const client = await connect(orphan.port);
      assert.equal(await client.ended, "ECONNRESET");
    } finally {
      await orphan.close();
    }
  });
});
