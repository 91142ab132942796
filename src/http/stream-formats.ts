/**
 * The two ways a list twin streams its elements instead of answering one array, chosen by the
 * client's `Accept`: NDJSON (one element per line) and server-sent events (one event per
 * element, its offset as the event's id, so that a reconnect resumes after it).
 */
export type StreamFormat = "ndjson" | "sse";

export interface StreamFraming {
  readonly contentType: string;
  /** One element's text as the format carries it; `id`: where a reconnect resumes after it. */
  frame(text: string, id: string | number | undefined): string;
  /** The stream's last chunk when it failed: its JsCantonError text framed. */
  errorFrame(errorText: string): string;
}

export const STREAM_FRAMINGS: Readonly<Record<StreamFormat, StreamFraming>> = {
  ndjson: {
    contentType: "application/x-ndjson",
    frame: (text) => `${text}\n`,
    errorFrame: (errorText) => `${errorText}\n`,
  },
  sse: {
    contentType: "text/event-stream",
    // Elements are compact JSON: no line breaks inside, so one `data:` line each.
    frame: (text, id) =>
      id === undefined || id === "" ? `data: ${text}\n\n` : `id: ${id}\ndata: ${text}\n\n`,
    errorFrame: (errorText) => `event: JsCantonError\ndata: ${errorText}\n\n`,
  },
};

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
