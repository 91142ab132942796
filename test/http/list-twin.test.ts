import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { CountJson } from "../fixtures/counter-endpoint.js";
import { COUNT_PATH } from "../fixtures/counter-endpoint.js";
import { tokenFor } from "../support/tokens.js";
import { type Harness, startHarness, waitFor } from "../support/transport-harness.js";
import { RawConnection } from "./raw-http.js";

const MAX = 100;

describe("HTTP list twins of stream endpoints", () => {
  let h: Harness;
  const token = tokenFor("alice");

  before(async () => {
    // A wait a loaded machine cannot miss before the first element; the gaps that end lists are 5x it.
    h = await startHarness({ maxElements: MAX, waitTimeMs: 1_000 });
  });
  after(() => h.stop());

  const list = (body: CountJson, query = "", init: RequestInit = {}) =>
    fetch(`${h.url}${COUNT_PATH}${query}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${token}` },
      ...init,
    });
  const seqs = async (response: Response) => ((await response.json()) as { seq: number }[]).map((e) => e.seq);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);

  it("returns a bounded stream whole, as one JSON array of the elements' texts", async () => {
    const response = await list({ count: 5, payloadBytes: 2 });
    const text = await response.text();
    strictEqual(response.status, 200);
    strictEqual(
      text,
      `[${range(5)
        .map((i) => JSON.stringify({ seq: i, offset: i + 1, payload: "xx" }))
        .join(",")}]`,
    );
  });

  it("truncates at limit when limit <= max, and cancels the rest of the call", async () => {
    const response = await list({ count: 1000 }, "?limit=7");
    deepStrictEqual({ status: response.status, seqs: await seqs(response) }, { status: 200, seqs: range(7) });
    const call = h.counter.calls.at(-1);
    await waitFor("call cancelled", () => call?.cancelled === true);
  });

  it("returns exactly max elements with 200", async () => {
    const response = await list({ count: MAX });
    deepStrictEqual(
      { status: response.status, seqs: await seqs(response) },
      { status: 200, seqs: range(MAX) },
    );
  });

  for (const [what, query] of [
    ["without limit", ""],
    ["with a limit above max", `?limit=${MAX + 50}`],
  ] as const) {
    it(`answers more than max elements ${what} with 413 JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED`, async () => {
      const response = await list({ count: MAX + 10 }, query);
      const body = (await response.json()) as Record<string, unknown>;
      deepStrictEqual(
        {
          status: response.status,
          code: body.code,
          cause: body.cause,
          errorCategory: body.errorCategory,
          grpcCodeValue: body.grpcCodeValue,
          retryInfo: body.retryInfo,
          definiteAnswer: body.definiteAnswer,
        },
        {
          status: 413,
          code: "JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED",
          cause: `The number of matching elements (${MAX + 1}) is greater than the node limit (${MAX}).`,
          errorCategory: 2,
          grpcCodeValue: 10,
          retryInfo: "1 second",
          // Canton builds it from an error code with a definite answer (JsonApiErrors.MaximumNumberOfElements).
          definiteAnswer: false,
        },
      );
    });
  }

  it("returns what was collected when an open-ended stream goes idle (configured wait)", async () => {
    // Open-ended: five quick elements, then a gap far longer than the 1 s wait.
    const response = await list({ failAfter: 0, intervalMs: 0, count: 0 }, "?limit=5");
    deepStrictEqual(await seqs(response), range(5));
    const idle = await list({ intervalMs: 5_000 });
    // The first element comes at once, the second only after 5 s: the wait ends the list.
    deepStrictEqual({ status: idle.status, seqs: await seqs(idle) }, { status: 200, seqs: [0] });
    await waitFor("call cancelled", () => h.counter.calls.at(-1)?.cancelled === true);
  });

  it("applies stream_idle_timeout_ms to a bounded stream too", async () => {
    const response = await list({ count: 3, intervalMs: 5_000 }, "?stream_idle_timeout_ms=1000");
    deepStrictEqual({ status: response.status, seqs: await seqs(response) }, { status: 200, seqs: [0] });
  });

  it("maps a gRPC error to its HTTP status and JsCantonError", async () => {
    // Bounded, so no idle wait can end the list before the error arrives on a busy machine.
    const response = await list({
      count: 5,
      failAfter: 2,
      failCode: grpc.status.FAILED_PRECONDITION,
      richError: true,
    });
    const body = (await response.json()) as Record<string, unknown>;
    deepStrictEqual(
      { status: response.status, code: body.code, errorCategory: body.errorCategory },
      { status: 400, code: "TEST_STREAM_FAILED", errorCategory: 9 },
    );
  });

  it("rejects a negative limit as an invalid query parameter", async () => {
    const response = await list({ count: 1 }, "?limit=-1");
    deepStrictEqual(
      { status: response.status, text: await response.text() },
      { status: 400, text: "Invalid value for: query parameter limit (expected an integer >= 0, got -1)" },
    );
  });

  it("cancels the gRPC call when the client goes away", async () => {
    const abort = new AbortController();
    const pending = list({ intervalMs: 50 }, "?stream_idle_timeout_ms=60000", { signal: abort.signal }).catch(
      () => undefined,
    );
    await waitFor("elements flowing", () => (h.counter.calls.at(-1)?.written ?? 0) > 2);
    const call = h.counter.calls.at(-1);
    abort.abort();
    await pending;
    await waitFor("call cancelled", () => call?.cancelled === true);
  });
});

describe("HTTP list twin answers larger than the socket takes at once", () => {
  let h: Harness;
  const token = tokenFor("alice");
  before(async () => {
    h = await startHarness({ maxElements: 5000 });
  });
  after(() => h.stop());

  it("reach a client that reads late whole and in order, and its connection serves the next request", async () => {
    // About 20 MB: more than the kernel's socket buffers hold, so the answer waits for the reader.
    const count = 2500;
    const payloadBytes = 8000;
    const body = JSON.stringify({ count, payloadBytes });
    const request =
      `POST ${COUNT_PATH} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const expected = `[${Array.from({ length: count }, (_, i) =>
      JSON.stringify({ seq: i, offset: i + 1, payload: "x".repeat(payloadBytes) }),
    ).join(",")}]`;
    const connection = await RawConnection.open(h.port);
    try {
      connection.socket.pause();
      connection.write(request);
      await waitFor("the stream written", () => h.counter.calls.at(-1)?.written === count);
      connection.socket.resume();
      await connection.untilResponses(1, 60_000);
      connection.write(request);
      await connection.untilResponses(2, 60_000);
      const answers = connection.responses().map((r) => ({ status: r.status, whole: r.body === expected }));
      deepStrictEqual(answers, [
        { status: 200, whole: true },
        { status: 200, whole: true },
      ]);
      strictEqual(connection.closed, false);
    } finally {
      connection.destroy();
    }
  });
});
