/**
 * The two ways a list twin or a paged endpoint streams its elements instead of answering them
 * in one JSON document, chosen by the client's `Accept`: NDJSON (one element per line) and
 * server-sent events (one event per element, with where a reconnect continues after it as the
 * event's id when the element has one). Framed by src/http/stream-framing.ts.
 */
export type StreamFormat = "ndjson" | "sse";

const MEDIA_TYPES: Readonly<Record<string, StreamFormat | "json">> = {
  "application/x-ndjson": "ndjson",
  "application/ndjson": "ndjson",
  "text/event-stream": "sse",
  "application/json": "json",
};

/**
 * The streamed format an `Accept` header prefers, if any: of the media types above, the one with
 * the highest weight (the first named on a tie), when that is not `application/json`. Canton's
 * one array stays the answer to every other Accept, `*\/*` and none included.
 */
export function streamFormatOf(accept: string): StreamFormat | undefined {
  if (accept === "") return undefined;
  let best: { format: StreamFormat | "json"; weight: number } | undefined;
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";");
    const format = MEDIA_TYPES[type.trim().toLowerCase()];
    if (format === undefined) continue;
    const weight = weightOf(params);
    if (weight > 0 && (best === undefined || weight > best.weight)) best = { format, weight };
  }
  return best === undefined || best.format === "json" ? undefined : best.format;
}

function weightOf(params: readonly string[]): number {
  for (const param of params) {
    const [name, value] = param.split("=");
    if (name?.trim().toLowerCase() === "q") {
      const weight = Number(value);
      return Number.isFinite(weight) ? weight : 0;
    }
  }
  return 1;
}
