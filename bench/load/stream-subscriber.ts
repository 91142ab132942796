import WebSocket from "ws";

/**
 * One WebSocket stream of a JSON Ledger API server held open for a run (/v2/updates,
 * /v2/commands/completions), as a client would: the token in the `jwt.token.` subprotocol, one
 * query frame, every frame parsed. A stream the server ends or fails is counted (`onFault`:
 * its JsCantonError code or close code) and opened again from the last offset it delivered, with
 * the token of the moment (a renewed one). `close` ends it with 1000.
 */
export interface StreamSubscriber {
  close(): void;
}

export interface StreamSpec {
  /** ws:// or wss:// URL of the stream. */
  url: string;
  token: () => string;
  /** The query frame, from this offset on. */
  request: (beginExclusive: number) => unknown;
  beginExclusive: number;
  /** Each element; returns the offset it carries, when it has one. */
  onElement: (element: Record<string, unknown>, at: number) => number | undefined;
  onFault: (code: string) => void;
  now: () => number;
}

export function subscribe(spec: StreamSpec): StreamSubscriber {
  let offset = spec.beginExclusive;
  let closing = false;
  let socket: WebSocket;
  const open = () => {
    socket = new WebSocket(spec.url, ["daml.ws.auth", `jwt.token.${spec.token()}`]);
    socket.on("open", () => socket.send(JSON.stringify(spec.request(offset))));
    socket.on("message", (data: Buffer) => {
      const at = spec.now();
      const element = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      if (typeof element.code === "string" && "cause" in element) {
        spec.onFault(`stream ${element.code}`);
        return;
      }
      const seen = spec.onElement(element, at);
      if (seen !== undefined && seen > offset) offset = seen;
    });
    // A failed socket also closes (1006): counted there, once.
    socket.on("error", () => undefined);
    socket.on("close", (code) => {
      if (closing) return;
      spec.onFault(`ws close ${code}`);
      setTimeout(open, 200).unref();
    });
  };
  open();
  return {
    close: () => {
      closing = true;
      socket.close(1000);
    },
  };
}

/** The offset of an update or completion frame (a transaction's, a checkpoint's, a completion's). */
export function offsetOf(inner: unknown): number | undefined {
  const offset = (inner as { value?: { offset?: unknown } } | undefined)?.value?.offset;
  return typeof offset === "number" ? offset : undefined;
}
