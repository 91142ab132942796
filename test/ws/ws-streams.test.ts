import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import WebSocket from "ws";
import type { CountJson } from "../fixtures/counter-endpoint.js";
import { COUNT_PATH } from "../fixtures/counter-endpoint.js";
import { tokenFor } from "../support/tokens.js";
import { type Harness, startHarness, waitFor } from "../support/transport-harness.js";

interface Outcome {
  frames: string[];
  code: number;
  reason: string;
  protocol: string;
}

/** Opens a socket, sends the query frame once open, collects every frame until close. */
function stream(
  h: Harness,
  query: CountJson | string,
  options: { protocols?: string[]; headers?: Record<string, string> } = {},
): { socket: WebSocket; done: Promise<Outcome> } {
  const socket = new WebSocket(`${h.wsUrl}${COUNT_PATH}`, options.protocols ?? [], {
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const frames: string[] = [];
  const done = new Promise<Outcome>((resolve, reject) => {
    socket.on("open", () => socket.send(typeof query === "string" ? query : JSON.stringify(query)));
    socket.on("message", (data) => frames.push(data.toString()));
    socket.on("error", reject);
    socket.on("close", (code, reason) =>
      resolve({ frames, code, reason: reason.toString(), protocol: socket.protocol }),
    );
  });
  return { socket, done };
}

/** A WebSocket upgrade request whose answer is read as plain HTTP. */
function rawUpgrade(url: string, protocols: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-protocol": protocols,
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("upgrade", () => reject(new Error("upgraded without a token")));
    req.on("error", reject);
    req.end();
  });
}

const seqs = (frames: string[]) => frames.map((f) => (JSON.parse(f) as { seq: number }).seq);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("WebSocket stream endpoints", () => {
  let h: Harness;
  const token = tokenFor("alice");

  before(async () => {
    h = await startHarness();
  });
  after(() => h.stop());

  describe("auth before the upgrade", () => {
    it("takes the token from the Authorization header and selects no subprotocol", async () => {
      const { done } = stream(h, { count: 2 }, { headers: { authorization: `Bearer ${token}` } });
      const out = await done;
      deepStrictEqual(
        { seqs: seqs(out.frames), code: out.code, protocol: out.protocol },
        {
          seqs: [0, 1],
          code: 1000,
          protocol: "",
        },
      );
      strictEqual(h.counter.calls.at(-1)?.authorization, `Bearer ${token}`);
    });

    it("takes the token from the subprotocol list and answers daml.ws.auth", async () => {
      const { done } = stream(h, { count: 2 }, { protocols: ["daml.ws.auth", `jwt.token.${token}`] });
      const out = await done;
      deepStrictEqual(
        { seqs: seqs(out.frames), protocol: out.protocol },
        { seqs: [0, 1], protocol: "daml.ws.auth" },
      );
      strictEqual(h.counter.calls.at(-1)?.authorization, `Bearer ${token}`);
    });

    it("accepts one comma-joined Sec-WebSocket-Protocol header with spaces", async () => {
      const socket = new WebSocket(`${h.wsUrl}${COUNT_PATH}`, {
        headers: { "sec-websocket-protocol": ` jwt.token.${token} , daml.ws.auth` },
      });
      // The `ws` client did not offer the protocols itself, so it accepts whatever is selected.
      const protocol = await new Promise<string>((resolve, reject) => {
        socket.on("upgrade", (res) => resolve(String(res.headers["sec-websocket-protocol"])));
        socket.on("error", reject);
      });
      socket.close();
      strictEqual(protocol, "daml.ws.auth");
    });

    it("answers ledger.ws.auth to a client that offered only that", async () => {
      const { done } = stream(h, { count: 1 }, { protocols: ["ledger.ws.auth", `jwt.token.${token}`] });
      const out = await done;
      deepStrictEqual(
        { seqs: seqs(out.frames), protocol: out.protocol },
        { seqs: [0], protocol: "ledger.ws.auth" },
      );
    });

    for (const [what, protocols] of [
      ["no token at all", ["daml.ws.auth"]],
      ["a token that is not a JWT", ["daml.ws.auth", "jwt.token.not-a-jwt"]],
    ] as const) {
      it(`answers ${what} with a plain HTTP 401 JsCantonError and no socket`, async () => {
        // node:http, not fetch: fetch refuses to send Upgrade headers.
        const response = await rawUpgrade(`${h.url}${COUNT_PATH}`, protocols.join(", "));
        const body = JSON.parse(response.body) as {
          code: string;
          errorCategory: number;
          grpcCodeValue: number;
        };
        deepStrictEqual(
          {
            status: response.status,
            code: body.code,
            category: body.errorCategory,
            grpc: body.grpcCodeValue,
          },
          { status: 401, code: "UNAUTHENTICATED", category: 6, grpc: grpc.status.UNAUTHENTICATED },
        );
      });
    }

    it("makes the ws client fail the handshake with 401", async () => {
      const socket = new WebSocket(`${h.wsUrl}${COUNT_PATH}`, ["daml.ws.auth"]);
      socket.on("error", () => undefined);
      const status = await new Promise<number>((resolve) =>
        socket.on("unexpected-response", (_req, res) => {
          resolve(res.statusCode ?? 0);
          socket.terminate();
        }),
      );
      strictEqual(status, 401);
    });
  });

  describe("frames", () => {
    const protocols = ["daml.ws.auth", `jwt.token.${token}`];

    it("sends one frame per element in order, the endpoint's text as is, then closes 1000", async () => {
      const out = await stream(h, { count: 500, payloadBytes: 10 }, { protocols }).done;
      deepStrictEqual({ seqs: seqs(out.frames), code: out.code }, { seqs: range(500), code: 1000 });
      strictEqual(out.frames[7], JSON.stringify({ seq: 7, offset: 8, payload: "xxxxxxxxxx" }));
    });

    it("ignores query frames after the first", async () => {
      const { socket, done } = stream(h, { count: 3, intervalMs: 20 }, { protocols });
      socket.once("message", () => socket.send(JSON.stringify({ count: 100 })));
      const out = await done;
      deepStrictEqual(
        { seqs: seqs(out.frames), calls: h.counter.calls.at(-1)?.request.count },
        {
          seqs: [0, 1, 2],
          calls: 3,
        },
      );
    });

    for (const [what, query, detail] of [
      ["a malformed query frame", "{not json", "Invalid value for: body ("],
      [
        "a query frame that misfits the schema",
        JSON.stringify({ count: "many" }),
        "Invalid value for: body (must be integer at /count)",
      ],
    ] as const) {
      it(`answers ${what} with one INVALID_ARGUMENT error frame, then closes`, async () => {
        const before = h.counter.calls.length;
        const out = await stream(h, query, { protocols }).done;
        strictEqual(out.frames.length, 1);
        const error = JSON.parse(out.frames[0] as string) as {
          code: string;
          cause: string;
          grpcCodeValue: number;
        };
        ok(error.cause.startsWith(detail), error.cause);
        deepStrictEqual(
          { code: error.code, grpc: error.grpcCodeValue, closeCode: out.code, calls: h.counter.calls.length },
          {
            code: "INVALID_ARGUMENT",
            grpc: grpc.status.INVALID_ARGUMENT,
            closeCode: 1000,
            calls: before,
          },
        );
      });
    }

    it("ends a failed gRPC stream with the elements, one JsCantonError frame decoded from the status, then close", async () => {
      const query = { failAfter: 3, failCode: grpc.status.FAILED_PRECONDITION, richError: true };
      const out = await stream(h, query, { protocols }).done;
      deepStrictEqual(seqs(out.frames.slice(0, 3)), [0, 1, 2]);
      strictEqual(out.frames.length, 4);
      const error = JSON.parse(out.frames[3] as string) as Record<string, unknown>;
      deepStrictEqual(
        {
          code: error.code,
          cause: error.cause,
          errorCategory: error.errorCategory,
          grpcCodeValue: error.grpcCodeValue,
          correlationId: error.correlationId,
          traceId: error.traceId,
          closeCode: out.code,
        },
        {
          code: "TEST_STREAM_FAILED",
          cause: "the test stream failed after some elements",
          errorCategory: 9,
          grpcCodeValue: grpc.status.FAILED_PRECONDITION,
          correlationId: "abc123",
          traceId: "trace-1",
          closeCode: 1000,
        },
      );
    });

    it("cancels the gRPC call as soon as the client disconnects", async () => {
      const { socket, done } = stream(h, { intervalMs: 5 }, { protocols });
      await waitFor("a few elements", () => (h.counter.calls.at(-1)?.written ?? 0) > 3);
      const call = h.counter.calls.at(-1);
      socket.terminate();
      await done;
      await waitFor("server saw 'cancelled'", () => call?.cancelled === true);
      await waitFor("socket gone", () => h.ws.open() === 0);
      const ends = await h.metrics.streamEnds.get();
      ok(ends.values.some((v) => v.labels.reason === "unsubscribed" && v.value >= 1));
    });

    it("sends keep-alive pings at the configured interval", async () => {
      const pinging = await startHarness({ pingIntervalMs: 50 });
      try {
        const socket = new WebSocket(`${pinging.wsUrl}${COUNT_PATH}`, protocols);
        socket.on("open", () => socket.send(JSON.stringify({ intervalMs: 1000 })));
        let pings = 0;
        socket.on("ping", () => {
          pings += 1;
        });
        await waitFor("two pings", () => pings >= 2);
        socket.terminate();
      } finally {
        pinging.stop();
      }
    });
  });

  describe("metrics", () => {
    it("counts elements, bytes, ends by reason and closes by code per endpoint template", async () => {
      const text = await (await h.metrics.exposition()).text;
      ok(
        text.includes(`ledger_gateway_stream_elements_sent_total{endpoint="${COUNT_PATH}",transport="ws"}`),
        text,
      );
      ok(
        text.includes(
          `ledger_gateway_stream_ends_total{endpoint="${COUNT_PATH}",transport="ws",reason="completed"}`,
        ),
      );
      ok(text.includes(`ledger_gateway_ws_closes_total{endpoint="${COUNT_PATH}",code="1000"}`));
      ok(text.includes(`ledger_gateway_ws_streams_open{endpoint="${COUNT_PATH}"} 0`));
    });
  });
});
