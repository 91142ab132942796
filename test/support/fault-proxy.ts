import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy that injects the network faults a ledger connection meets and Netty cannot be told
 * to produce: resets, black holes, stalls, a port that refuses and comes back.
 */
export interface FaultProxy {
  /** Its port; the same after refuse()/accept() and restart(). */
  readonly port: number;
  /** Connections open now (each a client socket and its target socket). */
  readonly connections: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Bytes forwarded from clients to the target, and from the target back. */
  readonly bytesToTarget: number;
  readonly bytesFromTarget: number;
  /** Every open connection ends with a TCP RST on both sides (socket.resetAndDestroy). */
  reset(): void;
  /**
   * On: no byte moves either way and new connections are accepted but never answered, as in a
   * network partition (peers' writes fill the kernel buffers; pings go unanswered). Off: what was
   * held flows on, as TCP delivers it once a partition heals.
   */
  blackhole(on: boolean): void;
  /** A black hole for `ms`; resolves once bytes flow again. */
  stall(ms: number): Promise<void>;
  /** Stops listening (connects get ECONNREFUSED); open connections stay. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  /** The ledger away and back: reset every connection, refuse for `downMs`, accept again. */
  restart(downMs: number): Promise<void>;
  /** Resets every connection and stops listening for good. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  targetPort: number;
  targetHost?: string;
  /** 0 or absent: ephemeral. */
  port?: number;
  host?: string;
}

interface Pipe {
  client: Socket;
  target: Socket;
}

/**
 * Ends `socket` with an RST. One that already sent its FIN closes with a FIN instead: libuv
 * cannot reset a socket that is shutting down, and Node would then leak its handle (the process
 * hangs at exit).
 */
function rst(socket: Socket): void {
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/** Starts a fault proxy on 127.0.0.1 (or `host`) forwarding to `targetHost:targetPort`. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const host = options.host ?? "127.0.0.1";
  const targetHost = options.targetHost ?? "127.0.0.1";
  const pipes = new Set<Pipe>();
  /** Sockets waiting for their peer to drain: only 'drain' resumes them. */
  const draining = new WeakSet<Socket>();
  let holding = false;
  let accepted = 0;
  let bytesToTarget = 0;
  let bytesFromTarget = 0;

  const resume = (socket: Socket) => {
    if (!holding && !draining.has(socket)) socket.resume();
  };

  /** Moves `from`'s bytes to `to`, with TCP's back pressure: `from` pauses while `to` is full. */
  const forward = (from: Socket, to: Socket, count: (bytes: number) => void) => {
    from.on("data", (chunk: Buffer) => {
      count(chunk.length);
      if (!to.write(chunk)) {
        draining.add(from);
        from.pause();
        to.once("drain", () => {
          draining.delete(from);
          resume(from);
        });
      }
    });
    from.on("end", () => to.end());
    from.on("error", (error: NodeJS.ErrnoException) => {
      // A reset on one side is passed on as a reset; any other failure closes the other side.
      if (error.code === "ECONNRESET") rst(to);
      else to.destroy();
    });
    from.on("close", () => to.destroy());
  };

  const server: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    accepted++;
    client.setNoDelay(true);
    const target = createConnection({ host: targetHost, port: options.targetPort, allowHalfOpen: true });
    target.setNoDelay(true);
    target.pause();
    const pipe = { client, target };
    pipes.add(pipe);
    // A target that refuses: the client sees its connection reset, as from a dead host's kernel.
    target.once("error", () => rst(client));
    client.once("close", () => pipes.delete(pipe));
    forward(client, target, (n) => {
      bytesToTarget += n;
    });
    forward(target, client, (n) => {
      bytesFromTarget += n;
    });
    target.once("connect", () => {
      resume(client);
      resume(target);
    });
  });

  const listen = async (port: number) => {
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        server.off("listening", listening);
        reject(error);
      };
      const listening = () => {
        server.off("error", failed);
        resolve();
      };
      server.once("error", failed).once("listening", listening);
      server.listen({ port, host, exclusive: true });
    });
  };
  await listen(options.port ?? 0);
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the fault proxy has no port");
  const port = address.port;

  const setHolding = (on: boolean) => {
    holding = on;
    for (const { client, target } of pipes) {
      for (const socket of [client, target]) {
        if (on) socket.pause();
        else if (target.connecting) client.pause();
        else resume(socket);
      }
    }
  };
  const reset = () => {
    for (const { client, target } of pipes) {
      rst(client);
      rst(target);
    }
    pipes.clear();
  };
  const refuse = async () => {
    if (!server.listening) return;
    // close() waits for open connections to end: only the listening socket is wanted closed.
    server.close();
  };
  const accept = async () => {
    if (!server.listening) await listen(port);
  };

  return {
    port,
    get connections() {
      return pipes.size;
    },
    get accepted() {
      return accepted;
    },
    get bytesToTarget() {
      return bytesToTarget;
    },
    get bytesFromTarget() {
      return bytesFromTarget;
    },
    reset,
    blackhole: setHolding,
    async stall(ms) {
      setHolding(true);
      await new Promise((resolve) => setTimeout(resolve, ms));
      setHolding(false);
    },
    refuse,
    accept,
    async restart(downMs) {
      await refuse();
      reset();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await accept();
    },
    async close() {
      await refuse();
      reset();
    },
  };
}
