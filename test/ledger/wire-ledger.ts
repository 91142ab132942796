import { once } from "node:events";
import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";

/** GetLedgerEndResponse{offset: 5}, framed. */
export const LEDGER_END_5 = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x05]);
export const OK_HEADERS = { ":status": 200, "content-type": "application/grpc" };

export type Answer = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;
export type WireLedger = Awaited<ReturnType<typeof startWireLedger>>;

/**
 * A gRPC server written on node:http2 itself, so that a test can answer exactly the bytes and
 * frames it wants (percent-encoded messages, HTTP errors, resets, silence) to the lean client.
 * `settings` are the HTTP/2 settings it announces.
 */
export async function startWireLedger(settings: http2.Settings = {}) {
  const server = http2.createServer({ settings });
  const ledger = {
    port: 0,
    /** How the next streams are answered. */
    answer: ((stream) => answerOk(stream)) as Answer,
    /** Each stream's request headers and its RST_STREAM code once closed. */
    streams: [] as { headers: IncomingHttpHeaders; closed: Promise<number> }[],
    /** HTTP/2 connections accepted so far. */
    connections: 0,
    /** PING frames received so far, on any connection. */
    pings: 0,
    /** Ends every connection at once, as a crashed ledger does. */
    dropConnections: () => {
      for (const session of sessions) session.destroy();
    },
    close: () => {
      ledger.dropConnections();
      server.close();
    },
  };
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    ledger.connections++;
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("ping", () => {
      ledger.pings++;
    });
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    const closed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode)));
    ledger.streams.push({ headers, closed });
    ledger.answer(stream, headers);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  ledger.port = (server.address() as AddressInfo).port;
  return ledger;
}

export function answerOk(
  stream: ServerHttp2Stream,
  frame = LEDGER_END_5,
  trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" },
) {
  stream.respond(OK_HEADERS, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  stream.end(frame);
}

export const answerTrailersOnly = (fields: Record<string, string>) => (stream: ServerHttp2Stream) =>
  stream.respond({ ...OK_HEADERS, ...fields }, { endStream: true });
