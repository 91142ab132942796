import WebSocket from "ws";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON frames loosely
export type Frame = Record<string, any>;

/** A stream socket as an attacker (or its victim) sees it, read while it runs. */
export interface WatchedSocket {
  /** Every frame so far, parsed, in order. */
  readonly frames: Frame[];
  /** The close code once closed. */
  readonly closedWith: number | undefined;
  /** Settles with the close code, whoever closes. */
  readonly closed: Promise<number>;
  /** Frames that are elements (not error frames). */
  elements(): Frame[];
  /** Error frames (JsCantonError bodies). */
  errors(): Frame[];
  /** Sends a frame as it is (a renewal `{"token": ...}`, anything). */
  send(text: string): void;
  /** A WebSocket ping: answered after every frame sent before it has been read by the server. */
  ping(): Promise<void>;
  close(): void;
  /** Its frames and close, for failure messages. */
  toString(): string;
}

/**
 * Opens `path` (default /v2/updates) on the gateway at `baseUrl` (http://…) with `token` in the
 * subprotocol, and sends `query` once open: a string as it is, anything else as JSON.
 */
export function watchedSocket(
  baseUrl: string,
  token: string,
  query: unknown,
  path = "/v2/updates",
): WatchedSocket {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}${path}`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  const frames: Frame[] = [];
  let closedWith: number | undefined;
  const pongs: (() => void)[] = [];
  socket.on("open", () => socket.send(typeof query === "string" ? query : JSON.stringify(query)));
  socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8")) as Frame));
  socket.on("pong", () => pongs.shift()?.());
  socket.on("error", () => undefined);
  const closed = new Promise<number>((resolve) =>
    socket.on("close", (code) => {
      closedWith = code;
      resolve(code);
      for (const pong of pongs.splice(0)) pong();
    }),
  );
  const isElement = (frame: Frame) => frame.update !== undefined;
  return {
    frames,
    get closedWith() {
      return closedWith;
    },
    closed,
    elements: () => frames.filter(isElement),
    errors: () => frames.filter((frame) => !isElement(frame)),
    send: (text) => socket.send(text),
    ping: () =>
      new Promise((resolve) => {
        if (socket.readyState !== WebSocket.OPEN) return resolve();
        pongs.push(resolve);
        socket.ping();
      }),
    close: () => socket.close(1000),
    toString: () => JSON.stringify({ closed: closedWith, frames }).slice(0, 4000),
  };
}

/** The update ids of the transactions a socket was sent, in order. */
export const updateIds = (socket: WatchedSocket): (string | undefined)[] =>
  socket.elements().map((frame) => frame.update?.Transaction?.value?.updateId as string | undefined);
