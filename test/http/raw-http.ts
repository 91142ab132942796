import { connect, type Socket } from "node:net";

/**
 * HTTP/1.1 over a bare TCP socket, for what a client library would hide or refuse to send:
 * conflicting headers, pipelining, bodies that never end, answers before the body is sent.
 */
export class RawConnection {
  private received = "";
  private ended = false;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.received += chunk.toString("latin1");
      this.wake();
    });
    socket.on("close", () => {
      this.ended = true;
      this.wake();
    });
    // A write after the server closed fails with EPIPE or ECONNRESET: the close is what we look at.
    socket.on("error", () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** Everything the server sent so far, as text. */
  get text(): string {
    return this.received;
  }

  /** The server closed the connection (or it broke). */
  get closed(): boolean {
    return this.ended;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Complete responses received so far (status line, headers, Content-Length body). */
  responses(): RawResponse[] {
    return parseResponses(this.received);
  }

  /** Waits until `condition` holds; fails only if it still does not after `boundMs`. */
  async until(what: string, condition: () => boolean, boundMs = 15_000): Promise<void> {
    const deadline = Date.now() + boundMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; received: ${this.received.slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  untilResponses(count: number, boundMs?: number): Promise<void> {
    return this.until(`${count} response(s)`, () => this.responses().length >= count, boundMs);
  }

  untilClosed(boundMs?: number): Promise<void> {
    return this.until("the connection to close", () => this.ended, boundMs);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
    this.waiters.clear();
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf("\r\n\r\n", at);
    if (headEnd < 0) break;
    const [statusLine = "", ...lines] = text.slice(at, headEnd).split("\r\n");
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    const bodyStart = headEnd + 4;
    if (text.length < bodyStart + length) break;
    responses.push({ status, headers, body: text.slice(bodyStart, bodyStart + length) });
    at = bodyStart + length;
  }
  return responses;
}

/** What a client that streams a large body saw: the answer, and how much it had sent by then. */
export interface StreamedUpload {
  response: RawResponse | undefined;
  /** Body bytes handed to the socket when the first byte of the answer arrived. */
  sentWhenAnswered: number;
  closed: boolean;
}

/**
 * Sends `head` (request line and headers, with their blank line) and then `total` body bytes in
 * 64 KiB writes as fast as the socket takes them, until the server answers or closes; the bytes
 * of the body are one reused buffer, so the client itself holds no copy of the body.
 */
export async function streamUpload(port: number, head: string, total: number): Promise<StreamedUpload> {
  const connection = await RawConnection.open(port);
  const { socket } = connection;
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  let sentWhenAnswered = -1;
  socket.once("data", () => {
    sentWhenAnswered = sent;
  });
  socket.write(head);
  const pump = () => {
    while (sent < total && sentWhenAnswered < 0 && !connection.closed) {
      const size = Math.min(chunk.length, total - sent);
      sent += size;
      if (!socket.write(size === chunk.length ? chunk : chunk.subarray(0, size))) {
        socket.once("drain", pump);
        return;
      }
    }
  };
  pump();
  await connection.until("an answer or a close", () => sentWhenAnswered >= 0 || connection.closed, 60_000);
  await connection.until("the whole answer", () => connection.responses().length > 0 || connection.closed);
  const closed = await connection
    .untilClosed(15_000)
    .then(() => true)
    .catch(() => false);
  connection.destroy();
  return {
    response: connection.responses()[0],
    sentWhenAnswered: sentWhenAnswered >= 0 ? sentWhenAnswered : sent,
    closed,
  };
}
