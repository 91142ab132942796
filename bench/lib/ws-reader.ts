import WebSocket from "ws";

export interface StreamReadResult {
  elements: number;
  bytes: number;
}

/**
 * Reads a gateway WebSocket stream to its end as a client would: one request frame, then
 * every element frame parsed as JSON (the cost a real consumer pays) until the server closes.
 */
export function readWebSocketStream(
  url: string,
  token: string,
  request: unknown,
  onElement: (element: unknown) => void = () => undefined,
): Promise<StreamReadResult> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`]);
    let elements = 0;
    let bytes = 0;
    socket.on("open", () => socket.send(JSON.stringify(request)));
    socket.on("message", (data: Buffer) => {
      bytes += data.length;
      const element = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      if ("code" in element && "cause" in element) {
        reject(new Error(`stream failed: ${element.code}: ${element.cause}`));
        socket.close();
        return;
      }
      elements++;
      onElement(element);
    });
    socket.on("close", (code) =>
      code === 1000 ? resolve({ elements, bytes }) : reject(new Error(`closed ${code}`)),
    );
    socket.on("error", reject);
  });
}
