import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import {
  parentSpanOf,
  sampledTraceId,
  traceContextOf,
  traceparentOf,
} from "../../src/ledger/trace-context.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, userFor } from "./ledger-client.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

interface ErrorBody {
  code: string;
  traceId: string | null;
}

/**
 * Issue 21 item 1, HTTP requests: the client's W3C trace context goes with the ledger calls made
 * for it, as Canton's JSON API maps it, so the ledger's errors name the client's trace; the
 * gateway's own errors (and a refused WebSocket upgrade's) name it too, and a request without
 * one gets a fresh trace.
 */
describe("the client's trace context on HTTP requests", () => {
  let stack: Stack;
  let party: string;
  let reader: string;
  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "traced");
    reader = await userFor(stack, "traced-reader", [], [party]);
  });
  after(() => stack.stop());

  const errorOf = async (path: string, headers: Record<string, string>, init: RequestInit = {}) => {
    const reply = await stack.request(path, { ...init, headers });
    assert.ok(reply.status >= 400, `${path}: ${reply.status}`);
    return (await reply.json()) as ErrorBody;
  };

  it("answers the ledger's error under the client's trace id (the issue's USER_NOT_FOUND)", async () => {
    const body = await errorOf("/v2/users/nosuchuser", { traceparent: TRACEPARENT });
    assert.equal(body.code, "USER_NOT_FOUND");
    assert.equal(body.traceId, TRACE_ID);
  });

  it("gives a request without one, or with an invalid one, a fresh trace of its own", async () => {
    const ids = new Set<string>();
    const cases: Record<string, string>[] = [
      {},
      {},
      { traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` },
      { traceparent: "garbage" },
    ];
    for (const headers of cases) {
      const body = await errorOf("/v2/users/nosuchuser", headers);
      assert.match(body.traceId ?? "", /^[0-9a-f]{32}$/);
      assert.notEqual(body.traceId, TRACE_ID);
      ids.add(body.traceId as string);
    }
    assert.equal(ids.size, 4);
  });

  it("names the client's trace in the gateway's own errors", async () => {
    const notFound = await errorOf("/v2/no-such-route", { traceparent: TRACEPARENT });
    assert.equal(notFound.traceId, TRACE_ID);
    const denied = await stack.request("/v2/users/nosuchuser", {
      token: null,
      headers: { traceparent: TRACEPARENT },
    });
    assert.equal(denied.status, 401);
    assert.equal(((await denied.json()) as ErrorBody).traceId, TRACE_ID);
  });

  /** The JSON answer to a WebSocket upgrade the gateway refuses, sent with the traceparent. */
  const refusedUpgrade = (protocols: string[]) =>
    new Promise<ErrorBody>((resolve, reject) => {
      const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, protocols, {
        headers: { traceparent: TRACEPARENT },
      });
      socket.on("unexpected-response", (_req, res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve(JSON.parse(text) as ErrorBody));
      });
      socket.on("open", () => reject(new Error("upgraded")));
      socket.on("error", () => {});
    });

  it("names the client's trace in the refusal of a WebSocket upgrade, the gateway's and the ledger's", async () => {
    // No token: the gateway's 401.
    assert.equal((await refusedUpgrade([])).traceId, TRACE_ID);
    // A user the ledger does not know: its admission call carried the trace, its 403 names it.
    const unknown = await refusedUpgrade(["daml.ws.auth", `jwt.token.${tokenFor("nobody-at-all")}`]);
    assert.equal(unknown.traceId, TRACE_ID);
  });

  /** The frames of a stream opened with the traceparent, after `query`, to its close. */
  const wsFrames = (token: string, query: string) =>
    new Promise<ErrorBody[]>((resolve, reject) => {
      const socket = new WebSocket(
        `${stack.url.replace(/^http/, "ws")}/v2/updates`,
        ["daml.ws.auth", `jwt.token.${token}`],
        {
          headers: { traceparent: TRACEPARENT },
        },
      );
      const frames: ErrorBody[] = [];
      socket.on("open", () => socket.send(query));
      socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString()) as ErrorBody));
      socket.on("close", () => resolve(frames));
      socket.on("error", reject);
    });

  it("names the client's trace in WebSocket error frames, the ledger's and the gateway's", async () => {
    // The ledger refuses the request of a reader it authorized (an end offset must be positive):
    // its error, under the client's trace.
    const refused = await wsFrames(reader, JSON.stringify(updatesRequest(partyFilter(party), 0, 0)));
    assert.equal(refused.length, 1, JSON.stringify(refused));
    assert.equal(refused[0]?.code, "OFFSET_OUT_OF_RANGE");
    assert.equal(refused[0]?.traceId, TRACE_ID);
    // A query frame the gateway refuses itself: its frame, under the client's trace.
    const malformed = await wsFrames(tokenFor(), "{not json");
    assert.equal(malformed[0]?.code, "INVALID_ARGUMENT");
    assert.equal(malformed[0]?.traceId, TRACE_ID);
  });

  it("reads traceparent as the W3C says", () => {
    assert.equal(traceContextOf(TRACEPARENT, " congo=t61rcWkgMzE ").tracestate, "congo=t61rcWkgMzE");
    assert.equal(traceContextOf(TRACEPARENT, "").tracestate, undefined);
    // A later version may add fields; version 00 may not; ff is never valid.
    assert.equal(traceContextOf(`01-${TRACE_ID}-00f067aa0ba902b7-01-extra`, "").traceId, TRACE_ID);
    assert.notEqual(traceContextOf(`${TRACEPARENT}-extra`, "").traceId, TRACE_ID);
    assert.notEqual(traceContextOf(`ff-${TRACE_ID}-00f067aa0ba902b7-01`, "").traceId, TRACE_ID);
    // An invalid parent drops the client's tracestate with it.
    assert.equal(traceContextOf("garbage", "congo=t61rcWkgMzE").tracestate, undefined);
    assert.match(traceContextOf("", "").traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  it("names a trace in exemplars only when it is sampled", () => {
    assert.equal(sampledTraceId(traceContextOf(TRACEPARENT, "")), TRACE_ID);
    assert.equal(sampledTraceId(traceContextOf(`00-${TRACE_ID}-00f067aa0ba902b7-00`, "")), undefined);
    // Other flags besides sampled, and a later version's extra fields.
    assert.equal(sampledTraceId(traceContextOf(`01-${TRACE_ID}-00f067aa0ba902b7-03-extra`, "")), TRACE_ID);
    // The gateway's own fresh traces are not sampled.
    assert.equal(sampledTraceId(traceContextOf("", "")), undefined);
  });

  it("reads the parent span and writes a traceparent at the W3C's offsets", () => {
    assert.deepEqual(parentSpanOf(traceContextOf(TRACEPARENT, "")), {
      spanId: "00f067aa0ba902b7",
      sampled: true,
    });
    assert.equal(traceparentOf(TRACE_ID, "00f067aa0ba902b7", true), TRACEPARENT);
    assert.equal(traceparentOf(TRACE_ID, "00f067aa0ba902b7", false), `00-${TRACE_ID}-00f067aa0ba902b7-00`);
  });
});
