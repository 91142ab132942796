import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { streamUpload } from "../http/raw-http.js";
import { signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";

const SECRET = "body-limits-secret";
const MiB = 1024 * 1024;

/** Samples this process's RSS (gateway and sandbox run in it) while `work` runs; the peak growth. */
async function peakRssGrowth(work: () => Promise<void>): Promise<number> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, process.memoryUsage().rss) - baseline;
}

const postHead = (port: number, path: string, length: number, token: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${length}\r\n\r\n`;

/** `count` uploads of `total` bytes to /v2/users at once: their outcomes, and the peak RSS growth meanwhile. */
async function concurrentUploads(port: number, count: number, total: number, token: string) {
  let uploads: Awaited<ReturnType<typeof streamUpload>>[] = [];
  const growth = await peakRssGrowth(async () => {
    uploads = await Promise.all(
      Array.from({ length: count }, () =>
        streamUpload(port, postHead(port, "/v2/users", total, token), total),
      ),
    );
  });
  return { uploads, growth };
}

describe("request bodies with the gateway's own token check (auth.mode hs256)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(
      ["--auth.mode", "hs256", "--auth.secret", SECRET],
      {},
      {
        sandbox: { auth: { mode: "hs256", secret: SECRET } },
      },
    );
  });
  after(() => stack.stop());

  it("refuses a forged token before reading the body: 8 concurrent 60 MiB uploads get their 401 early, memory stays bounded", async (t) => {
    const forged = signToken("participant_admin", { key: "not-the-secret" });
    const total = 60 * MiB;
    const { uploads, growth } = await concurrentUploads(stack.gateway.port, 8, total, forged);
    t.diagnostic(
      `peak RSS growth ${Math.round(growth / MiB)} MiB; body bytes sent before the answer: ${uploads.map((u) => u.sentWhenAnswered).join(", ")}`,
    );
    for (const upload of uploads) {
      assert.equal(upload.response?.status, 401);
      assert.equal(JSON.parse(upload.response?.body ?? "{}").code, "UNAUTHENTICATED");
      // The answer came while most of the body was still with the client: the gateway never read it.
      assert.ok(
        upload.sentWhenAnswered < total / 2,
        `answered after ${upload.sentWhenAnswered} of ${total} bytes`,
      );
      assert.ok(upload.closed, "the connection is closed: the unread body is not parsed as requests");
    }
    // Before the fix each body was read whole and parsed: about 1 GB for these eight.
    assert.ok(growth < 200 * MiB, `RSS grew by ${Math.round(growth / MiB)} MiB`);
  });

  it("refuses a request without a token before reading its body", async () => {
    const port = stack.gateway.port;
    const total = 60 * MiB;
    const head = `POST /v2/users HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${total}\r\n\r\n`;
    const upload = await streamUpload(port, head, total);
    assert.equal(upload.response?.status, 401);
    assert.ok(
      upload.sentWhenAnswered < total / 2,
      `answered after ${upload.sentWhenAnswered} of ${total} bytes`,
    );
  });
});

describe("request bodies without the gateway's token check (auth.mode none)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--server.max-body-bytes", String(16 * MiB)]);
  });
  after(() => stack.stop());

  it("answers 413 on a Content-Length over server.max-body-bytes without reading the body", async () => {
    const port = stack.gateway.port;
    const total = 64 * MiB;
    const upload = await streamUpload(port, postHead(port, "/v2/users", total, stack.token), total);
    assert.equal(upload.response?.status, 413);
    assert.equal(JSON.parse(upload.response?.body ?? "{}").code, "REQUEST_TOO_LARGE");
    // Before the fix the gateway read bytes up to the limit (16 MiB) before it answered.
    assert.ok(
      upload.sentWhenAnswered < 16 * MiB,
      `answered after ${upload.sentWhenAnswered} of ${total} bytes`,
    );
    assert.ok(upload.closed, "the connection is closed");
  });

  it("answers 413, not 429, when the request is over the ledger's gRPC message limit", async () => {
    // The sandbox takes gRPC messages of up to 4 MiB (grpc-js's default, as a server's inbound
    // limit); this body is within the gateway's 16 MiB.
    const party = await stack.request("/v2/parties", {
      method: "POST",
      body: JSON.stringify({ partyIdHint: "big-payload" }),
    });
    const issuer = ((await party.json()) as { partyDetails: { party: string } }).partyDetails.party;
    const response = await stack.request("/v2/commands/submit-and-wait", {
      method: "POST",
      body: JSON.stringify({
        commandId: "too-large",
        actAs: [issuer],
        commands: [
          {
            CreateCommand: {
              templateId: "#gateway-samples:Iou:Iou",
              createArguments: {
                issuer,
                owner: issuer,
                currency: "x".repeat(5 * MiB),
                amount: "1",
                observers: [],
              },
            },
          },
        ],
      }),
    });
    assert.equal(response.status, 413);
    const body = (await response.json()) as { code: string; cause: string };
    assert.equal(body.code, "REQUEST_TOO_LARGE");
    assert.match(body.cause, /larger than the ledger accepts/);
  });
});

describe("many large bodies at once without the gateway's token check (auth.mode none)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack(["--server.max-body-bytes", String(16 * MiB)]);
  });
  after(() => stack.stop());

  it("reads two bodies of the largest size at a time: memory does not grow with the number of uploads", async (t) => {
    // The token is forged, but here only the ledger could tell: every body is read and parsed.
    const forged = signToken("participant_admin", { key: "not-the-secret" });
    const total = 15 * MiB;
    const { uploads, growth } = await concurrentUploads(stack.gateway.port, 12, total, forged);
    t.diagnostic(`peak RSS growth ${Math.round(growth / MiB)} MiB for 12 concurrent 15 MiB bodies`);
    // Every body was read (a body of spaces is no JSON: 400), none refused for the wait.
    assert.deepEqual(
      uploads.map((upload) => upload.response?.status),
      uploads.map(() => 400),
    );
    // Before the fix all twelve were held at once, each as bytes and as text: about 360 MiB.
    assert.ok(growth < 250 * MiB, `RSS grew by ${Math.round(growth / MiB)} MiB`);
  });
});
