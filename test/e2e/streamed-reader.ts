import http from "node:http";
import type { Stack } from "../support/stack.js";
import { until } from "../support/until.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON elements loosely
type Json = Record<string, any>;

export type StreamedFormat = "ndjson" | "sse";

const ACCEPT: Record<StreamedFormat, string> = {
  ndjson: "application/x-ndjson",
  sse: "text/event-stream",
};

/** How a streamed answer ended, as the client saw it. */
export interface StreamedEnd {
  status: number;
  /** The chunked body's last chunk arrived: the gateway ended the answer, nobody cut it. */
  complete: boolean;
  /** ms from the request to the end. */
  afterMs: number;
  /** performance.now() at the end. */
  at: number;
}

/**
 * One streamed list twin answer (NDJSON or server-sent events) read as it comes over a socket of
 * its own: its elements so far (each line, or each event's data, as JSON; an SSE error event's
 * data too), and its end.
 */
export class StreamedReader {
  readonly elements: Json[] = [];
  /** SSE: each element's `event:` name ("" for none); NDJSON: none. */
  readonly eventNames: string[] = [];
  readonly ended: Promise<StreamedEnd>;
  status = 0;
  #text = "";
  #done = false;
  readonly #request: http.ClientRequest;

  constructor(
    stack: Stack,
    path: string,
    body: unknown,
    token: string,
    format: StreamedFormat,
    options: {
      /** Reads the status and headers, then nothing: what the gateway writes piles up. */
      takesNothing?: boolean;
      /** Sent as the request's `traceparent` header. */
      traceparent?: string;
    } = {},
  ) {
    const started = performance.now();
    const separator = format === "ndjson" ? "\n" : "\n\n";
    let settle: (end: StreamedEnd) => void = () => {};
    let fail: (error: Error) => void = () => {};
    this.ended = new Promise((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    this.#request = http.request(
      `${stack.url}${path}`,
      {
        method: "POST",
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          accept: ACCEPT[format],
          ...(options.traceparent ? { traceparent: options.traceparent } : {}),
        },
      },
      (res) => {
        this.status = res.statusCode ?? 0;
        if (options.takesNothing) res.pause();
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          this.#text += chunk;
          for (let at = this.#text.indexOf(separator); at >= 0; at = this.#text.indexOf(separator)) {
            const piece = this.#text.slice(0, at);
            this.#text = this.#text.slice(at + separator.length);
            const parsed = format === "ndjson" ? piece : dataOf(piece);
            if (parsed === undefined) continue;
            this.elements.push(JSON.parse(parsed) as Json);
            if (format === "sse") this.eventNames.push(eventOf(piece));
          }
        });
        // An answer cut short ("aborted") ends with close, not end: `complete` tells them apart.
        res.on("error", () => {});
        res.on("close", () => {
          this.#done = true;
          const at = performance.now();
          settle({ status: this.status, complete: res.complete, afterMs: at - started, at });
        });
      },
    );
    this.#request.on("error", fail);
    this.#request.end(JSON.stringify(body));
  }

  /** What came after the last whole element: an error answer's body (a 403's JsCantonError). */
  get rest(): string {
    return this.#text;
  }

  /** Whether the answer is over (ended or cut). */
  get done(): boolean {
    return this.#done;
  }

  /** Update ids of the transactions received. */
  get updateIds(): string[] {
    return this.elements
      .map((e) => e.update?.Transaction?.value?.updateId as string | undefined)
      .filter((id): id is string => id !== undefined);
  }

  /** Waits (bounded) for the transaction with this update id; fails if the answer ended first. */
  async received(updateId: string): Promise<void> {
    await until(
      () => {
        if (this.updateIds.includes(updateId)) return true;
        if (this.#done) throw new Error(`ended before ${updateId}: ${JSON.stringify(this.elements)}`);
        return false;
      },
      { budgetMs: 60_000, observed: () => JSON.stringify(this.updateIds) },
    );
  }

  /** The client goes away. */
  close(): void {
    this.#request.destroy();
  }
}

/** An SSE event's name, "" if it has none. */
function eventOf(event: string): string {
  const line = event.split("\n").find((l) => l.startsWith("event: "));
  return line?.slice("event: ".length) ?? "";
}

/** An SSE event's data, if it has one. */
function dataOf(event: string): string | undefined {
  const line = event.split("\n").find((l) => l.startsWith("data: "));
  return line?.slice("data: ".length);
}
