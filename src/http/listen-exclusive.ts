import uWS, { type TemplatedApp } from "uWebSockets.js";
import { createServer } from "node:net";

/** The gateway cannot have its address; the message names it and why, in one line. */
export class ListenError extends Error {
  override name = "ListenError";
  constructor(
    readonly address: string,
    readonly port: number,
    readonly reason: string,
    /** errno code of the refused bind (EADDRINUSE, EACCES, ...), when the kernel gave one. */
    readonly code?: string,
  ) {
    super(`cannot listen on ${hostPort(address, port)}: ${reason}`);
  }
}

const REASONS: Record<string, string> = {
  EADDRINUSE: "address already in use (another gateway or another process listens there)",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "address not available on this machine",
  ENOTFOUND: "unknown host name",
  EAI_AGAIN: "host name lookup failed",
};

/**
 * uSockets' flag that leaves SO_REUSEPORT off. The build exports it as a number; its typings know
 * it only as the enum `ListenOptions`, which does not exist at run time.
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT: number =
  (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1;

function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Binds the address with node:net and lets it go again; rejects with a {@link ListenError}
 * when the kernel refuses. The probe socket has no SO_REUSEPORT, so any listener already there
 * refuses it: a plain server, and also a uWS app, which listens with SO_REUSEPORT and would
 * otherwise share the port (and the requests) with us without a word. Port 0 is never taken.
 *
 * Resolves once the probe is released; the fd is closed synchronously by `close()`, so a
 * caller that listens in the same tick leaves no other process a moment to slip in.
 */
export async function probeAddress(address: string, port: number): Promise<void> {
  if (port !== 0) await bindProbe(address, port);
}

/**
 * Binds the address with node:net (no SO_REUSEPORT) and lets it go at once; resolves with the
 * port bound (the kernel's pick for 0), rejects with the kernel's reason as a ListenError.
 */
function bindProbe(address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      const code = error.code;
      reject(new ListenError(address, port, (code && REASONS[code]) ?? error.message, code));
    });
    probe.listen({ host: address, port }, () => {
      const bound = (probe.address() as { port: number }).port;
      probe.close();
      resolve(bound);
    });
  });
}

const takenWhileStarting = (address: string, port: number) =>
  new ListenError(address, port, "address already in use (taken while the gateway started)");

/**
 * Listens the uWS app on the address alone: the probe first (for the kernel's reason when it is
 * taken), then uWS with LIBUS_LISTEN_EXCLUSIVE_PORT (no SO_REUSEPORT), so that a second gateway
 * started at the same moment, after our probe, is refused too instead of splitting the traffic.
 *
 * Worker threads sharing the port (server.workers > 1) use {@link holdPort} and {@link listenShared}.
 */
export async function listenExclusive(
  app: TemplatedApp,
  address: string,
  port: number,
): Promise<uWS.us_listen_socket> {
  await probeAddress(address, port);
  const socket = await listenWith(app, address, port, LIBUS_LISTEN_EXCLUSIVE_PORT);
  if (!socket) throw takenWhileStarting(address, port);
  return socket;
}

/** uWS's listen with options, which its typings lack: (host, port, options, callback). */
function listenWith(
  app: TemplatedApp,
  address: string,
  port: number,
  options: number,
): Promise<uWS.us_listen_socket | false> {
  const listen = app.listen as unknown as (
    host: string,
    port: number,
    options: number,
    callback: (socket: uWS.us_listen_socket | false) => void,
  ) => TemplatedApp;
  return new Promise((resolve) => listen.call(app, address, port, options, resolve));
}

/**
 * Listens on a port the main thread holds ({@link holdPort}), with SO_REUSEPORT (uWS's default):
 * every worker thread's app accepts its share of the connections, the kernel spreading them.
 */
export async function listenShared(
  app: TemplatedApp,
  address: string,
  port: number,
): Promise<uWS.us_listen_socket> {
  const socket = await listenWith(app, address, port, 0);
  if (!socket) throw takenWhileStarting(address, port);
  return socket;
}

/** The address, held by the main thread for its workers; see {@link holdPort}. */
export interface HeldPort {
  /** The port, picked by the kernel when 0 was asked for. */
  readonly port: number;
  /** Lets go of the main thread's placeholder, once the workers listen. */
  release(): void;
}

/**
 * Takes the address for worker threads that will share it (server.workers > 1). Other
 * processes stay out as with one thread: the node:net probe (no SO_REUSEPORT) is refused by any
 * listener, uWS apps included, and once it is released a placeholder uWS app listens in the
 * same tick, with SO_REUSEPORT, so that the workers can join it and a later probe is refused.
 * The placeholder answers 503 to a connection the kernel hands it before the workers listen.
 *
 * Port 0 is picked by the probe and then named: Linux never lets a second socket join a port
 * it picked itself, SO_REUSEPORT or not.
 */
export async function holdPort(address: string, port: number): Promise<HeldPort> {
  const picked = await bindProbe(address, port);
  // Continues in the probe's own turn (a microtask): the placeholder listens before any I/O.
  const app = uWS.App().any("/*", (res) => {
    res.writeStatus("503 Service Unavailable").end("starting");
  });
  const socket = await listenWith(app, address, picked, 0);
  if (!socket) {
    app.close();
    throw takenWhileStarting(address, picked);
  }
  return {
    port: picked,
    release() {
      uWS.us_listen_socket_close(socket);
      app.close();
    },
  };
}
