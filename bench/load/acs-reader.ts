import WebSocket from "ws";
import { errorCode, type JsonClient, networkErrorCode } from "./json-client.js";
import type { Prepared } from "./prepare.js";
import type { SeriesRecorder } from "./recorder.js";

/**
 * One reader of the acs-stream scenario: reads the acs party's snapshot over WebSocket
 * /v2/state/active-contracts at the ledger end of the moment, to the stream's end, and again, until
 * closed. A read's latency runs from opening the socket to its normal close after the last element
 * (what an application pays to load its state at start-up); the ledger end it reads at is asked
 * before, outside it. A failed read is counted under its error frame's code or its close code, and
 * the next read follows.
 */
export interface AcsReader {
  /** Ends the reader: a read in progress is neither recorded nor counted. */
  close(): void;
}

export interface AcsReaderDeps {
  /** The server's http(s) URL. */
  url: string;
  client: JsonClient;
  token: () => string;
  prepared: Prepared;
  reads: SeriesRecorder;
  /** Each measured read's elements (the snapshot's contracts). */
  onElements: (count: number) => void;
  /** Whether a read begun at this time is in the measured window (not the warm-up, not the drain). */
  measured: (startedAt: number) => boolean;
  now: () => number;
}

/** A JsCantonError frame (a failed stream) begins so; an element never does. */
const ERROR_START = Buffer.from('{"code":');

export function acsReader(deps: AcsReaderDeps): AcsReader {
  let closed = false;
  let socket: WebSocket | undefined;
  const eventFormat = { filtersByParty: { [deps.prepared.acsParty as string]: {} }, verbose: false };

  const ledgerEnd = async (): Promise<number | string> => {
    try {
      const answer = await deps.client.request("GET", "/v2/state/ledger-end", deps.token());
      if (answer.status !== 200) return `ledger-end ${errorCode(answer)}`;
      return (JSON.parse(answer.body) as { offset: number }).offset;
    } catch (error) {
      return `ledger-end ${networkErrorCode(error)}`;
    }
  };

  /** One read: its elements, and the code it failed with unless it reached the stream's end. */
  const read = (activeAtOffset: number) =>
    new Promise<{ fault?: string; elements: number }>((resolve) => {
      let elements = 0;
      let fault: string | undefined;
      const ws = new WebSocket(`${deps.url.replace(/^http/, "ws")}/v2/state/active-contracts`, [
        "daml.ws.auth",
        `jwt.token.${deps.token()}`,
      ]);
      socket = ws;
      ws.on("open", () => ws.send(JSON.stringify({ eventFormat, activeAtOffset })));
      ws.on("message", (data: Buffer) => {
        if (data.subarray(0, ERROR_START.length).equals(ERROR_START))
          fault ??= `stream ${String((JSON.parse(data.toString("utf8")) as { code?: unknown }).code)}`;
        else elements++;
      });
      // A failed socket also closes (1006): counted there.
      ws.on("error", () => undefined);
      ws.on("close", (code) => {
        if (code !== 1000) fault ??= `ws close ${code}`;
        resolve({ ...(fault !== undefined && { fault }), elements });
      });
    });

  const loop = async () => {
    while (!closed) {
      const offset = await ledgerEnd();
      if (closed) return;
      if (typeof offset === "string") {
        if (deps.measured(deps.now())) deps.reads.error(offset);
        await pause();
        continue;
      }
      const startedAt = deps.now();
      const { fault, elements } = await read(offset);
      if (closed) return;
      const measured = deps.measured(startedAt);
      if (measured) deps.onElements(elements);
      if (fault === undefined) {
        if (measured) deps.reads.record(deps.now() - startedAt);
      } else {
        if (measured) deps.reads.error(fault);
        await pause();
      }
    }
  };
  void loop();
  return {
    close: () => {
      closed = true;
      socket?.close(1000);
    },
  };
}

/** After a failure, a breath before the next read: a refusing server is not hammered in a tight loop. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 200).unref());
