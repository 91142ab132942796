import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { describe, it } from "node:test";
import { loadConfig } from "../../src/config/load-config.js";
import { startGateway } from "../../src/gateway.js";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { answerOk, OK_HEADERS } from "./wire-ledger.js";

/** HealthCheckResponse{status: SERVING}, framed. */
const SERVING = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);
/** GetLedgerApiVersionResponse{version: "3.5.10"}, framed: the gateway asks it at start. */
const VERSION = Buffer.from([0, 0, 0, 0, 8, 0x0a, 0x06, ...Buffer.from("3.5.10")]);

/**
 * The client's ping interval, and the least the server below permits: between it and twice it,
 * close to twice it. A ping at the interval is then a strike unless the event loop lags by 550 ms
 * (on a loaded machine, with 300 and 450 a lag of 150 ms made no strike and no GOAWAY), and one at
 * twice the interval never is: timers do not fire early, and the next ping is armed only once the
 * server has answered the last.
 */
const INTERVAL_MS = 600;
const PERMIT_MS = 1150;
/** Pings sooner than PERMIT_MS after the one before that the server lets pass (Netty allows 2). */
const STRIKES_ALLOWED = 1;

interface SessionSeen {
  /** When each PING arrived (performance.now()). */
  pings: number[];
  /** Gaps between consecutive PINGs shorter than PERMIT_MS. */
  strikes: number;
  /** The server sent GOAWAY ENHANCE_YOUR_CALM `too_many_pings`. */
  calmedDown: boolean;
}

/**
 * A node:http2 gRPC server that enforces a keepalive permit time as grpc-java's Netty server
 * does: a client whose PINGs come sooner than PERMIT_MS apart more than STRIKES_ALLOWED times
 * gets GOAWAY ENHANCE_YOUR_CALM with the debug data `too_many_pings`. Every call but the health
 * check and the version question is held open (headers, no message), so that the client has a
 * call to ping for.
 */
async function startStrictLedger() {
  const server = http2.createServer();
  const sessions: SessionSeen[] = [];
  server.on("session", (session) => {
    const seen: SessionSeen = { pings: [], strikes: 0, calmedDown: false };
    sessions.push(seen);
    let lastStreamId = 0;
    session.on("stream", (stream, headers) => {
      lastStreamId = stream.id ?? lastStreamId;
      stream.on("error", () => {});
      if (headers[":path"] === "/grpc.health.v1.Health/Check") answerOk(stream, SERVING);
      else if (headers[":path"] === "/com.daml.ledger.api.v2.VersionService/GetLedgerApiVersion")
        answerOk(stream, VERSION);
      else stream.respond(OK_HEADERS);
    });
    session.on("error", () => {});
    session.on("ping", () => {
      const now = performance.now();
      const previous = seen.pings.at(-1);
      seen.pings.push(now);
      if (previous !== undefined && now - previous < PERMIT_MS) seen.strikes++;
      if (seen.strikes > STRIKES_ALLOWED && !seen.calmedDown) {
        seen.calmedDown = true;
        session.goaway(
          http2.constants.NGHTTP2_ENHANCE_YOUR_CALM,
          lastStreamId,
          Buffer.from("too_many_pings"),
        );
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as AddressInfo).port, sessions, server };
}

async function waitFor(what: string, condition: () => boolean, observed: () => string, bound = 30_000) {
  const deadline = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; observed: ${observed()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const gaps = (pings: number[]) => pings.slice(1).map((at, i) => Math.round(at - (pings[i] as number)));

describe("LedgerClient keepalive after GOAWAY too_many_pings", () => {
  it("pings at twice the interval on the next connection, as grpc-js does, and says so once", async () => {
    const ledger = await startStrictLedger();
    const throttled: number[] = [];
    const client = new LedgerClient({
      target: `127.0.0.1:${ledger.port}`,
      deadlineMs: 60_000,
      keepalive: { timeMs: INTERVAL_MS, timeoutMs: 10_000 },
      onKeepaliveThrottled: (intervalMs) => throttled.push(intervalMs),
    });
    const seen = () =>
      JSON.stringify(
        ledger.sessions.map((s) => ({ gaps: gaps(s.pings), strikes: s.strikes, goaway: s.calmedDown })),
      );
    const open = () => {
      let done = (): void => {};
      const ended = new Promise<void>((resolve) => {
        done = resolve;
      });
      const subscription = client
        .serverStream("UpdateService", "GetUpdates", {}, undefined, { rawResponses: true })
        .subscribe({ error: () => done(), complete: () => done() });
      return { subscription, ended };
    };
    try {
      const first = open();
      await waitFor(
        "GOAWAY too_many_pings on the first connection",
        () => ledger.sessions[0]?.calmedDown === true,
        seen,
      );
      await first.ended;
      deepStrictEqual(throttled, [2 * INTERVAL_MS], "the doubled interval was told once");

      const second = open();
      await waitFor(
        "three pings on the second connection",
        () => (ledger.sessions[1]?.pings.length ?? 0) >= 3,
        seen,
      );
      second.subscription.unsubscribe();
      const next = ledger.sessions[1] as SessionSeen;
      strictEqual(ledger.sessions.length, 2, seen());
      strictEqual(next.strikes, 0, `no ping came sooner than the ledger permits: ${seen()}`);
      ok(!next.calmedDown, seen());
      deepStrictEqual(throttled, [2 * INTERVAL_MS], "still told once");
    } finally {
      client.close();
      ledger.server.close();
    }
  });
});

describe("the gateway's ledger.keepalive-interval after GOAWAY too_many_pings", () => {
  it("logs the doubled interval once, at warn", async () => {
    const ledger = await startStrictLedger();
    const { log, entries } = capturingLogger();
    const gateway = await startGateway(
      loadConfig({ argv: ["--port", "0", "--ledger.keepalive-interval", `${INTERVAL_MS}ms`], env: {} }),
      { host: "127.0.0.1", port: ledger.port },
      log,
    );
    const throttledLines = () => entries().filter((entry) => entry.keepaliveIntervalMs !== undefined);
    try {
      // Held by the ledger: an open call for the keepalive to ping for, until the GOAWAY ends it.
      const held = fetch(`http://127.0.0.1:${gateway.port}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${"t".repeat(20)}` },
      });
      await waitFor(
        "GOAWAY too_many_pings",
        () => ledger.sessions[0]?.calmedDown === true,
        () => JSON.stringify(ledger.sessions.map((s) => gaps(s.pings))),
      );
      strictEqual((await held).status, 503, "the held call ended with its connection");
      await waitFor(
        "the log line",
        () => throttledLines().length > 0,
        () => JSON.stringify(entries()),
      );
      const [line, ...more] = throttledLines();
      deepStrictEqual(more, [], "one line");
      strictEqual(line?.level, 40, JSON.stringify(line));
      strictEqual(line?.keepaliveIntervalMs, 2 * INTERVAL_MS);
      strictEqual(line?.ledger, `127.0.0.1:${ledger.port}`);
    } finally {
      await gateway.stop(1_000);
      ledger.server.close();
    }
  });
});
