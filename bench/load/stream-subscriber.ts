import WebSocket from "ws";

/**
 * One WebSocket stream of a JSON Ledger API server held open for a run (/v2/updates,
 * /v2/commands/completions), as a client would: the token in the `jwt.token.` subprotocol, one
 * query frame, every frame parsed. A stream the server ends or fails is counted (`onFault`:
 * its JsCantonError code or close code) and opened again from the last offset it delivered, with
 * the token of the moment (a renewed one), or renewed in band where the server takes that.
 * `close` ends it with 1000.
 */
export interface StreamSubscriber {
  /**
   * Moves the open stream onto a renewed token in band (`{"token": ...}`, ledger-json-gateway's
   * renewal frame: docs/streams.md), so that its old token's expiry ends nothing.
   */
  renew(token: string): void;
  close(): void;
}

export interface StreamSpec {
  /** ws:// or wss:// URL of the stream. */
  url: string;
  token: () => string;
  /** The query frame, from this offset on. */
  request: (beginExclusive: number) => unknown;
  beginExclusive: number;
  /** Each element as it came (bytes: a handler may read what it needs without parsing it all); returns the offset it carries, when it has one. */
  onElement: (element: Buffer, at: number) => number | undefined;
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
      if (data.subarray(0, ERROR_START.length).equals(ERROR_START)) {
        const error = JSON.parse(data.toString("utf8")) as { code?: unknown };
        spec.onFault(`stream ${String(error.code)}`);
        return;
      }
      const seen = spec.onElement(data, at);
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
    renew: (token) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ token }));
    },
    close: () => {
      closing = true;
      socket.close(1000);
    },
  };
}

/** A JsCantonError frame (a failed stream) begins so; an element never does. */
const ERROR_START = Buffer.from('{"code":');

const OFFSET = Buffer.from('"offset":');

/**
 * The first `"offset":N` of a frame: a transaction's or a checkpoint's (its events repeat it),
 * a completion's. Read from the bytes: a tool that parsed every frame of 100 subscribers whole
 * would measure its own JSON.parse as much as the server.
 */
export function offsetIn(frame: Buffer): number | undefined {
  return numberIn(frame, OFFSET);
}

/** The number value of the first `"key":N` of a frame. */
export function numberIn(frame: Buffer, key: Buffer): number | undefined {
  const at = frame.indexOf(key);
  return at < 0 ? undefined : numberAt(frame, at + key.length);
}

function numberAt(frame: Buffer, from: number): number | undefined {
  let value = 0;
  let i = from;
  for (; i < frame.length; i++) {
    const c = frame[i] as number;
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
  }
  return i === from ? undefined : value;
}

/** The string value of the first `"key":"..."` of a frame (ids: no escapes in them). */
export function stringIn(frame: Buffer, key: Buffer): string | undefined {
  const at = frame.indexOf(key);
  if (at < 0) return undefined;
  const start = at + key.length;
  const end = frame.indexOf(0x22, start);
  return end < 0 ? undefined : frame.toString("utf8", start, end);
}
