import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import zlib from "node:zlib";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came over the wire, not decoded. */
  body: Buffer;
}

/** One request with exactly these headers (fetch would add its own Accept-Encoding and decode). */
function raw(stack: Stack, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return new Promise<Raw>((resolve, reject) => {
    const req = http.request(`${stack.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const decoded = (reply: Raw): string => {
  const coding = reply.headers["content-encoding"];
  if (coding === "br") return zlib.brotliDecompressSync(reply.body).toString();
  if (coding === "gzip") return zlib.gunzipSync(reply.body).toString();
  return reply.body.toString();
};

describe("HTTP answers compressed for clients that accept it", () => {
  let stack: Stack;
  let plain: Stack;
  let auth: Record<string, string>;
  let request: unknown;
  before(async () => {
    const preload = { sandbox: { preload: { ticks: 200, payloadBytes: 1024, party: "zipped" } } };
    stack = await startStack([], {}, preload);
    plain = await startStack(["--server.http-compression", "off"], {}, preload);
    const { participantId } = (await (await stack.request("/v2/parties/participant-id")).json()) as {
      participantId: string;
    };
    const party = `zipped::${participantId.split("::")[1]}`;
    auth = { authorization: `Bearer ${tokenFor(`actAs-${party}`)}` };
    const { offset } = (await (await stack.request("/v2/state/ledger-end")).json()) as { offset: number };
    request = updatesRequest(partyFilter(party), 0, offset);
  });
  after(async () => {
    await stack.stop();
    await plain.stop();
  });

  it("sends a large answer brotli- or gzip-compressed, the same JSON in under a third of the bytes", async () => {
    const identity = await raw(stack, "POST", "/v2/updates", auth, request);
    assert.equal(identity.headers["content-encoding"], undefined);
    assert.ok(
      identity.body.length > 64 * 1024,
      `${identity.body.length} bytes: compressed off the event loop`,
    );
    for (const [accept, coding] of [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["br;q=0, gzip;q=0.5", "gzip"],
      ["*", "gzip"],
    ] as const) {
      const reply = await raw(stack, "POST", "/v2/updates", { ...auth, "accept-encoding": accept }, request);
      assert.equal(reply.status, 200);
      assert.equal(reply.headers["content-encoding"], coding, accept);
      assert.equal(reply.headers.vary, "Accept-Encoding");
      assert.equal(Number(reply.headers["content-length"]), reply.body.length);
      assert.deepEqual(JSON.parse(decoded(reply)), JSON.parse(identity.body.toString()));
      assert.ok(reply.body.length * 3 < identity.body.length, `${accept}: ${reply.body.length} bytes`);
    }
    // Between the threshold and 64 KiB: compressed on the event loop, the same way.
    const few = await raw(
      stack,
      "POST",
      "/v2/updates?limit=5",
      { ...auth, "accept-encoding": "br" },
      request,
    );
    assert.equal(few.headers["content-encoding"], "br");
    assert.equal((JSON.parse(decoded(few)) as unknown[]).length, 5);
  });

  it("leaves small answers, identity-only clients and `off` as they are", async () => {
    const version = await raw(stack, "GET", "/v2/version", { ...auth, "accept-encoding": "br, gzip" });
    assert.equal(version.status, 200);
    assert.equal(version.headers["content-encoding"], undefined, "under server.http-compression-min-bytes");
    const identityOnly = await raw(
      stack,
      "POST",
      "/v2/updates",
      { ...auth, "accept-encoding": "identity" },
      request,
    );
    assert.equal(identityOnly.headers["content-encoding"], undefined);
    const off = await raw(plain, "POST", "/v2/updates", { ...auth, "accept-encoding": "br, gzip" }, request);
    assert.equal(off.status, 200);
    assert.equal(off.headers["content-encoding"], undefined);
  });

  it("compresses a streamed list twin as it goes: each element readable when it was sent", async () => {
    const ndjson = { ...auth, accept: "application/x-ndjson" };
    const identity = await raw(stack, "POST", "/v2/updates", ndjson, request);
    for (const coding of ["br", "gzip"] as const) {
      const whole = await raw(
        stack,
        "POST",
        "/v2/updates",
        { ...ndjson, "accept-encoding": coding },
        request,
      );
      assert.equal(whole.headers["content-encoding"], coding);
      assert.equal(whole.headers["transfer-encoding"], "chunked");
      assert.equal(decoded(whole), identity.body.toString());
      assert.ok(whole.body.length * 3 < identity.body.length, `${coding}: ${whole.body.length} bytes`);
    }
    // Open-ended with a minute's idle wait: its first lines decode long before it could end.
    const open = { ...(request as Record<string, unknown>), endInclusive: undefined };
    const firstLine = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${stack.url}/v2/updates?stream_idle_timeout_ms=60000`,
        { method: "POST", headers: { ...ndjson, "accept-encoding": "br" }, agent: false },
        (res) => {
          let text = "";
          const decoder = zlib.createBrotliDecompress();
          res.pipe(decoder);
          decoder.on("data", (chunk: Buffer) => {
            text += chunk.toString();
            if (text.includes("\n")) {
              resolve(text.slice(0, text.indexOf("\n")));
              res.destroy();
            }
          });
          decoder.on("error", () => {});
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(open));
    });
    assert.equal(firstLine, identity.body.toString().split("\n")[0]);
  });

  it("compresses what Prometheus scrapes", async () => {
    const metrics = await raw(stack, "GET", "/metrics", { "accept-encoding": "gzip" });
    assert.equal(metrics.headers["content-encoding"], "gzip");
    assert.match(decoded(metrics), /^# HELP /m);
  });
});
