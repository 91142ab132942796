import WebSocket from "ws";

/** How a socket ended: the frames it got, in order, and its close. */
export interface SocketOutcome {
  frames: Record<string, unknown>[];
  code: number;
  reason: string;
}

/**
 * A /v2/updates socket of `token` on the gateway at `gatewayUrl` (http://…) that sends `request`
 * once open; `ended` settles with its frames once it is closed, whoever closes it.
 */
export function updatesSocket(
  gatewayUrl: string,
  token: string,
  request: unknown,
): { socket: WebSocket; ended: Promise<SocketOutcome> } {
  const socket = new WebSocket(`${gatewayUrl.replace(/^http/, "ws")}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  const frames: Record<string, unknown>[] = [];
  socket.on("open", () => socket.send(JSON.stringify(request)));
  socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
  socket.on("error", () => undefined);
  const ended = new Promise<SocketOutcome>((resolve) =>
    socket.on("close", (code, reason) => resolve({ frames, code, reason: reason.toString() })),
  );
  return { socket, ended };
}
