import { connect } from "node:net";

/**
 * HTTP/1.1 over a bare socket: fetch would normalise exactly what the fuzzer wants to send
 * (duplicated or huge headers, odd encodings, broken request lines). One request per
 * connection (`Connection: close`), answered or not within a deadline.
 */
export interface RawRequest {
  method: string;
  /** Request target as sent, e.g. `/v2/users?pageSize=1`. */
  target: string;
  /** Sent in order, duplicates included; Host and Connection are added unless present. */
  headers: [string, string][];
  body?: Buffer;
  /** Whole request bytes to send instead of composing them (request-line faults). */
  raw?: Buffer;
}

export type RawOutcome =
  | { kind: "answer"; status: number; headers: Record<string, string>; body: Buffer; ms: number }
  | { kind: "timeout"; ms: number }
  | { kind: "closed"; ms: number; error?: string };

export function composeRequest(port: number, request: RawRequest): Buffer {
  if (request.raw !== undefined) return request.raw;
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  if (!names.has("host")) lines.push(`Host: 127.0.0.1:${port}`);
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (request.body !== undefined && !names.has("content-length") && !names.has("transfer-encoding"))
    lines.push(`Content-Length: ${request.body.length}`);
  if (!names.has("connection")) lines.push("Connection: close");
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  return request.body === undefined ? head : Buffer.concat([head, request.body]);
}

export function sendRaw(port: number, request: RawRequest, deadlineMs: number): Promise<RawOutcome> {
  const started = performance.now();
  const bytes = composeRequest(port, request);
  const noBody = request.method === "HEAD";
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let received = Buffer.alloc(0);
    let settled = false;
    let socketError: string | undefined;
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: "timeout", ms: performance.now() - started }), deadlineMs);
    const tryParse = (ended: boolean) => {
      const answer = parseResponse(received, noBody, ended);
      if (answer !== undefined) settle({ kind: "answer", ...answer, ms: performance.now() - started });
      else if (ended) settle({ kind: "closed", ms: performance.now() - started, error: socketError });
    };
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    // The server may answer early (413, 401) and close while the body is still being written.
    socket.on("error", (error) => {
      socketError = (error as NodeJS.ErrnoException).code ?? error.message;
    });
    socket.on("close", () => tryParse(true));
    socket.write(bytes);
  });
}

/** The first complete response in `data`, or undefined while it is incomplete. */
function parseResponse(
  data: Buffer,
  noBody: boolean,
  ended: boolean,
): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  // Interim answers (100 Continue) come before the real one.
  if (/^HTTP\/1\.[01] 1\d\d/.test(data.subarray(0, 12).toString("latin1")))
    return parseResponse(data.subarray(end + 4), noBody, ended);
  const [statusLine, ...headerLines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1]);
  if (!Number.isInteger(status)) return ended ? { status: 0, headers: {}, body: data } : undefined;
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = data.subarray(end + 4);
  if (noBody || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
  const length = headers["content-length"];
  if (length !== undefined) {
    const n = Number(length);
    if (rest.length >= n) return { status, headers, body: rest.subarray(0, n) };
    return ended ? { status, headers, body: rest } : undefined;
  }
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const body = dechunk(rest);
    if (body !== undefined) return { status, headers, body };
    return ended ? { status, headers, body: rest } : undefined;
  }
  return ended ? { status, headers, body: rest } : undefined;
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
