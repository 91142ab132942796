import WebSocket from "ws";
import type { Stack } from "../support/stack.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON frames loosely
type Json = Record<string, any>;

/** An open WebSocket stream: its frames so far, and a wait for a frame that satisfies `until`. */
export interface OpenStream {
  readonly frames: Json[];
  waitFor(until: (frames: Json[]) => boolean): Promise<Json[]>;
  close(): void;
}

export function openStream(stack: Stack, path: string, request: unknown, token: string): Promise<OpenStream> {
  const url = `${stack.url.replace(/^http/, "ws")}${path}`;
  const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`]);
  const frames: Json[] = [];
  const waiters = new Set<() => void>();
  let closed: number | undefined;
  socket.on("message", (data: Buffer) => {
    frames.push(JSON.parse(data.toString("utf8")) as Json);
    for (const wake of waiters) wake();
  });
  socket.on("close", (code) => {
    closed = code;
    for (const wake of waiters) wake();
  });
  return new Promise((resolve, reject) => {
    socket.on("error", reject);
    socket.on("open", () => {
      socket.send(JSON.stringify(request));
      resolve({
        frames,
        waitFor: (until) =>
          new Promise((done, fail) => {
            const check = () => {
              if (until(frames)) {
                waiters.delete(check);
                done(frames);
              } else if (closed !== undefined) {
                waiters.delete(check);
                fail(new Error(`closed ${closed} before the awaited frame: ${JSON.stringify(frames)}`));
              }
            };
            waiters.add(check);
            check();
          }),
        close: () => socket.close(1000),
      });
    });
  });
}
