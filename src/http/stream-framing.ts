import type { StreamFormat } from "../endpoints/stream-format.js";

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
