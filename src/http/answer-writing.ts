import type { HttpResponse } from "uWebSockets.js";
import type { Logger } from "pino";
import type { Answer } from "../endpoints/route.js";
import { type ContentCoding, compressed } from "./answer-compression.js";

/**
 * What writing an answer needs of its exchange (http-app.ts): the response, how the answer must
 * end, and the in-flight count to leave once the answer is handed over.
 */
export interface AnswerTarget {
  readonly res: HttpResponse;
  /** A HEAD: the GET's headers and length, no body. */
  readonly head: boolean;
  /** The answer ends the connection. */
  readonly closes: boolean;
  readonly aborted: boolean;
  /** Headers every answer of the exchange carries (CORS). */
  readonly headers: readonly (readonly [string, string])[];
  /** The coding the client accepts for a compressed answer. */
  readonly coding: ContentCoding | undefined;
  settle(): void;
}

/** A whole answer (not a streamed one), as uWS writes it. */
export type WholeAnswer = Exclude<Answer, { kind: "stream" }>;

const STATUS_TEXT: Record<number, string> = {
  200: "200 OK",
  204: "204 No Content",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  408: "408 Request Timeout",
  409: "409 Conflict",
  413: "413 Payload Too Large",
  429: "429 Too Many Requests",
  499: "499 Client Closed Request",
  500: "500 Internal Server Error",
  501: "501 Not Implemented",
  503: "503 Service Unavailable",
  504: "504 Gateway Timeout",
};

/**
 * Writes a whole answer: JSON serialised, compressed when the client accepts it and it is at
 * least `compressionMinBytes` (undefined: never), then the status, the exchange's headers and
 * the body, in one cork. The target leaves the in-flight count when the answer is handed over.
 */
export function writeAnswer(
  target: AnswerTarget,
  status: number,
  answer: WholeAnswer,
  compressionMinBytes: number | undefined,
  log: Logger,
): void {
  // JSON is serialised here, once, whether it goes out compressed or not.
  const written: Exclude<WholeAnswer, { kind: "json" }> =
    answer.kind === "json"
      ? { kind: "text", text: JSON.stringify(answer.body), contentType: "application/json" }
      : answer;
  if (
    compressionMinBytes !== undefined &&
    isCompressible(written) &&
    sizeOf(written) >= compressionMinBytes
  ) {
    const { coding } = target;
    if (coding !== undefined) {
      void sendCompressed(target, status, compressible(written), coding, log);
      return;
    }
  }
  target.settle();
  if (target.aborted) return;
  const { res } = target;
  res.cork(() => {
    writeStatusAndHeaders(target, status);
    switch (written.kind) {
      case "json-bytes":
        sendBytes(target, "application/json", written.chunks, written.length);
        break;
      case "text":
        send(target, written.contentType ?? "text/plain; charset=utf-8", written.text);
        break;
      case "bytes":
        for (const [name, value] of Object.entries(written.headers)) res.writeHeader(name, value);
        sendChunked(target, "application/octet-stream", written.body);
        break;
      case "empty":
        if (target.head) endHead(target, 0);
        else res.end(undefined, target.closes);
        break;
    }
  });
}

/** A body worth compressing: JSON or text of at least `minBytes` (package bytes are zips already). */
interface CompressibleBody {
  contentType: string;
  chunks: readonly Uint8Array[];
  length: number;
}

/** The answers compression applies to: JSON and text (package bytes are zips already). */
type CompressibleAnswer = Extract<Answer, { kind: "json-bytes" | "text" }>;

function isCompressible(answer: Answer): answer is CompressibleAnswer {
  return answer.kind === "text" || answer.kind === "json-bytes";
}

/** An answer's size as compression weighs it: a text's characters count at most its bytes. */
function sizeOf(answer: CompressibleAnswer): number {
  return answer.kind === "text" ? answer.text.length : answer.length;
}

function compressible(answer: CompressibleAnswer): CompressibleBody {
  if (answer.kind === "json-bytes") return { contentType: "application/json", ...answer };
  const bytes = Buffer.from(answer.text);
  return {
    contentType: answer.contentType ?? "text/plain; charset=utf-8",
    chunks: [bytes],
    length: bytes.byteLength,
  };
}

/**
 * The answer compressed (on the thread pool when large), then sent as a list twin's bytes are.
 * The exchange stays in flight until then; a failure to compress sends it as is.
 */
async function sendCompressed(
  target: AnswerTarget,
  status: number,
  body: CompressibleBody,
  coding: ContentCoding,
  log: Logger,
): Promise<void> {
  let out: { chunks: readonly Uint8Array[]; length: number } = body;
  let encoded = true;
  try {
    out = await compressed(coding, body.chunks, body.length);
  } catch (error) {
    log.error({ err: error }, "compressing an answer failed: sent as is");
    encoded = false;
  }
  target.settle();
  if (target.aborted) return;
  const { res } = target;
  res.cork(() => {
    writeStatusAndHeaders(target, status);
    if (encoded) writeCoding(target, coding);
    else res.writeHeader("Vary", "Accept-Encoding");
    sendBytes(target, body.contentType, out.chunks, out.length);
  });
}

/** The headers of an answer compressed for the client's Accept-Encoding. */
export function writeCoding(target: AnswerTarget, coding: ContentCoding): void {
  target.res.writeHeader("Content-Encoding", coding);
  target.res.writeHeader("Vary", "Accept-Encoding");
}

/** The status line and the headers every answer of this exchange carries (CORS). */
export function writeStatusAndHeaders(target: AnswerTarget, status: number): void {
  target.res.writeStatus(STATUS_TEXT[status] ?? `${status} Status`);
  for (const [name, value] of target.headers) target.res.writeHeader(name, value);
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Binary downloads go out with `Transfer-Encoding: chunked` (uWS switches to it on `write`), as
 * the description promises for package bytes; uWS buffers what the socket cannot take yet.
 */
function sendChunked(target: AnswerTarget, contentType: string, body: Uint8Array): void {
  const { res } = target;
  res.writeHeader("Content-Type", contentType);
  if (target.head) {
    endHead(target, body.byteLength);
    return;
  }
  for (let offset = 0; offset < body.byteLength; offset += CHUNK_BYTES) {
    res.write(body.subarray(offset, Math.min(offset + CHUNK_BYTES, body.byteLength)));
  }
  res.end(undefined, target.closes);
}

/**
 * A large answer already in bytes (a list twin's), given to the socket as it takes them
 * (uWS tryEnd + onWritable): uWS copies none of it into its own buffer, and each chunk is
 * garbage once sent, so the answer is in memory once, and less as it leaves.
 */
function sendBytes(
  target: AnswerTarget,
  contentType: string,
  chunks: readonly Uint8Array[],
  length: number,
): void {
  const { res } = target;
  res.writeHeader("Content-Type", contentType);
  if (target.head) {
    endHead(target, length);
    return;
  }
  if (target.closes) {
    // tryEnd cannot close the connection after the answer: end() can, with the bytes in one piece.
    res.end(Buffer.concat(chunks, length), true);
    return;
  }
  const pending: (Uint8Array | undefined)[] = [...chunks];
  let index = 0;
  /** Body bytes before the current chunk. */
  let chunkStart = 0;
  /** Writes on from the response's write offset; false when the socket takes no more for now. */
  const pump = (): boolean => {
    for (;;) {
      const chunk = pending[index];
      if (chunk === undefined) return true;
      const sent = res.getWriteOffset() - chunkStart;
      const [ok, done] = res.tryEnd(sent === 0 ? chunk : chunk.subarray(sent), length);
      if (done) return true;
      if (!ok) return false;
      pending[index++] = undefined;
      chunkStart += chunk.byteLength;
    }
  };
  if (pump()) return;
  res.onWritable(() => {
    if (target.aborted) return true;
    let ok = false;
    res.cork(() => {
      ok = pump();
    });
    return ok;
  });
}

function send(target: AnswerTarget, contentType: string, body: string | Uint8Array): void {
  const { res } = target;
  res.writeHeader("Content-Type", contentType);
  if (target.head) {
    endHead(target, typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  } else {
    res.end(body, target.closes);
  }
}

/**
 * The answer to a HEAD: the GET's headers, its Content-Length, no body. Not through uWS's
 * endWithoutBody(length): in uWS 20 (uwebsockets@3.0.6) that leaves the response waiting for the
 * length's bytes, and the connection's next request then finds it pending and closes the
 * connection. The header written here and endWithoutBody() without a length end it at once.
 */
function endHead(target: AnswerTarget, length: number): void {
  const { res } = target;
  res.writeHeader("Content-Length", String(length));
  if (target.closes) res.writeHeader("Connection", "close");
  res.endWithoutBody();
}
