import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

/** An element or an answer as read: only the fields the test looks at. */
interface Json {
  update?: Record<string, { value: { offset: number } }>;
  code?: string;
  offset?: number;
  participantId?: string;
}

const TICKS = 2000;
const PAYLOAD = 8 * 1024;

interface Streamed {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** ms from the request to the first byte of the body. */
  firstByteMs: number;
}

/**
 * POSTs `body` with these headers over a socket of its own and reads the answer, calling
 * `onData` with each piece of the body and the length received so far (it may pause, resume
 * or destroy the answer).
 */
function post(
  stack: Stack,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  onData?: (chunk: string, received: number, res: http.IncomingMessage) => void,
): Promise<Streamed> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.url}${path}`, { method: "POST", headers, agent: false }, (res) => {
      const received: string[] = [];
      let length = 0;
      let firstByteMs = -1;
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        received.push(chunk);
        length += chunk.length;
        onData?.(chunk, length, res);
      });
      // "close" also when `onData` destroyed the answer: the test has what it wanted then.
      res.on("close", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: received.join(""), firstByteMs }),
      );
      res.on("error", () => {});
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** NDJSON lines as JSON. */
const lines = (body: string): Json[] =>
  body
    .split("\n")
    .slice(0, -1)
    .map((line) => JSON.parse(line) as Json);

interface SseEvent {
  id?: string;
  event?: string;
  data: Json;
}

function events(body: string): SseEvent[] {
  return body
    .split("\n\n")
    .filter((block) => block.split("\n").some((line) => line.startsWith("data: ")))
    .map((block) => {
      const event: Partial<SseEvent> = {};
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) event.id = line.slice(4);
        if (line.startsWith("event: ")) event.event = line.slice(7);
        if (line.startsWith("data: ")) event.data = JSON.parse(line.slice(6)) as Json;
      }
      return event as SseEvent;
    });
}

const offsetOf = (element: Json): number | undefined => Object.values(element.update ?? {})[0]?.value.offset;

describe("list twins streamed as NDJSON and server-sent events", () => {
  let stack: Stack;
  let party: string;
  let end: number;
  let auth: Record<string, string>;
  const ndjson = { accept: "application/x-ndjson" };
  before(async () => {
    ({ stack, party, auth, end } = await preloadedStack("streamed", TICKS, [
      "--websocket-config.http-list-max-elements-limit",
      String(TICKS + 10),
    ]));
  });
  after(() => stack.stop());

  it("streams the same elements as the list, past the node's element limit, and SSE with offsets as ids", async () => {
    const request = updatesRequest(partyFilter(party), 0, end);
    const list = await post(stack, "/v2/updates", request, auth);
    assert.equal(list.status, 200);
    assert.equal(list.headers["content-type"], "application/json");
    const elements = JSON.parse(list.body) as Json[];
    assert.ok(elements.length >= TICKS, `${elements.length} elements`);

    const streamed = await post(stack, "/v2/updates", request, { ...auth, ...ndjson });
    assert.equal(streamed.status, 200);
    assert.equal(streamed.headers["content-type"], "application/x-ndjson");
    assert.equal(streamed.headers["transfer-encoding"], "chunked");
    assert.deepEqual(lines(streamed.body), elements);

    const sse = await post(stack, "/v2/updates", request, { ...auth, accept: "text/event-stream" });
    assert.equal(sse.headers["content-type"], "text/event-stream");
    const received = events(sse.body);
    assert.deepEqual(
      received.map((e) => e.data),
      elements,
    );
    assert.deepEqual(
      received.map((e) => Number(e.id)),
      elements.map(offsetOf),
    );
    for (const transport of ["ndjson", "sse"]) {
      const ends = await gatewayMetric(
        stack.url,
        "ledger_gateway_stream_ends_total",
        'endpoint="/v2/updates"',
        `transport="${transport}"`,
        'reason="completed"',
      );
      assert.ok(ends >= 1, `${transport}: ${ends} completed streams counted`);
    }
  });

  it("is not cut by the node's list element limit, which answers the list 413", async () => {
    const capped = await preloadedStack("capped", 200, [
      "--websocket-config.http-list-max-elements-limit",
      "100",
    ]);
    try {
      const request = updatesRequest(partyFilter(capped.party), 0, capped.end);
      const list = await post(capped.stack, "/v2/updates", request, capped.auth);
      assert.equal(list.status, 413);
      const streamed = await post(capped.stack, "/v2/updates", request, { ...capped.auth, ...ndjson });
      assert.equal(streamed.status, 200);
      assert.equal(lines(streamed.body).length >= 200, true);
    } finally {
      await capped.stack.stop();
    }
  });

  it("continues after Last-Event-ID on a server-sent events reconnect", async () => {
    const request = updatesRequest(partyFilter(party), 0, end);
    const all = events(
      (await post(stack, "/v2/updates", request, { ...auth, accept: "text/event-stream" })).body,
    );
    const last = all[99] as SseEvent;
    const rest = await post(stack, "/v2/updates", request, {
      ...auth,
      accept: "text/event-stream",
      "last-event-id": String(last.id),
    });
    assert.equal(rest.status, 200);
    assert.deepEqual(
      events(rest.body).map((e) => e.id),
      all.slice(100).map((e) => e.id),
    );
    const garbage = await post(stack, "/v2/updates", request, {
      ...auth,
      accept: "text/event-stream",
      "last-event-id": "not-an-offset",
    });
    assert.equal(garbage.status, 400);
    assert.match(garbage.body, /^Invalid value for: header Last-Event-ID/);
  });

  it("applies `limit`, sends the first element at once, and answers a refused reader with its status", async () => {
    const request = updatesRequest(partyFilter(party), 0, end);
    const ten = await post(stack, "/v2/updates?limit=10", request, { ...auth, ...ndjson });
    assert.equal(lines(ten.body).length, 10);
    const first = await post(stack, "/v2/updates", request, { ...auth, ...ndjson }, (_c, _r, res) =>
      res.destroy(),
    );
    assert.ok(
      first.firstByteMs >= 0 && first.firstByteMs < 2_000,
      `first byte after ${first.firstByteMs} ms`,
    );

    const refused = await post(stack, "/v2/updates", request, {
      authorization: `Bearer ${tokenFor("nobody-at-all")}`,
      ...ndjson,
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers["content-type"], "application/json");
    assert.ok(typeof (JSON.parse(refused.body) as Json).code === "string");
  });

  it("gives a slow reader every element in order, the last one before the stream's idle end", async () => {
    // Open-ended with a long idle wait: the answer ends 20 s after the last tick. The reader
    // stops for 150 ms every 512 KiB, so the gateway's writes outrun it and the socket refuses
    // some; the last element must still arrive when the reader takes it, not at the idle end.
    const request = updatesRequest(partyFilter(party), 0);
    let paused = 0;
    let lastTickAt = 0;
    let newlines = 0;
    const started = performance.now();
    await post(
      stack,
      "/v2/updates?stream_idle_timeout_ms=20000",
      request,
      { ...auth, ...ndjson },
      (chunk, received, res) => {
        newlines += chunk.split("\n").length - 1;
        if (newlines >= TICKS) {
          lastTickAt = performance.now() - started;
          res.destroy();
          return;
        }
        if (received - paused * 512 * 1024 > 512 * 1024) {
          paused += 1;
          res.pause();
          setTimeout(() => res.resume(), 150);
        }
      },
    );
    assert.ok(lastTickAt > 0, "every tick arrived");
    assert.ok(lastTickAt < 15_000, `the last tick came ${lastTickAt} ms in, not at the idle end`);
    assert.ok(paused > 10, `${paused} pauses`);
  });

  it("ends with a JsCantonError line when the stream fails after its first element", async () => {
    const drained = await preloadedStack("drained", 20, []);
    try {
      let stopping: Promise<void> | undefined;
      const reply = await post(
        drained.stack,
        "/v2/updates?stream_idle_timeout_ms=30000",
        updatesRequest(partyFilter(drained.party), 0),
        { ...drained.auth, ...ndjson },
        (chunk) => {
          if (stopping === undefined && chunk.includes("\n")) stopping = drained.stack.gateway.stop(5_000);
        },
      );
      await stopping;
      assert.equal(reply.status, 200);
      const all = lines(reply.body);
      assert.ok(all.length >= 2, reply.body);
      assert.equal((all.at(-1) as Json).code, "SERVICE_NOT_RUNNING", reply.body.slice(-500));
      assert.equal(
        all.slice(0, -1).every((element) => element.update !== undefined),
        true,
      );
    } finally {
      await drained.stack.sandbox.stop();
    }
  });
});

/** A stack whose sandbox preloaded `ticks` ticks for a party of its own; that party's reader. */
async function preloadedStack(owner: string, ticks: number, gatewayArgs: string[]) {
  const stack = await startStack(
    gatewayArgs,
    {},
    { sandbox: { preload: { ticks, payloadBytes: PAYLOAD, party: owner } } },
  );
  const { participantId = "" } = (await (await stack.request("/v2/parties/participant-id")).json()) as Json;
  // The preload allocates its owner on the participant's own namespace.
  const party = `${owner}::${participantId.split("::")[1]}`;
  const end = ((await (await stack.request("/v2/state/ledger-end")).json()) as Json).offset as number;
  return { stack, party, end, auth: { authorization: `Bearer ${tokenFor(`actAs-${party}`)}` } };
}
