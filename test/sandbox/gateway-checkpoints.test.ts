import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { allocate, call, IOU, userFor } from "../e2e/ledger-client.js";
import { type Stack, startStack } from "../support/stack.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely
type Json = Record<string, any>;

/** `c<offset>` for a checkpoint element, `u<offset>` for a completion. */
const kinds = (elements: Json[]) =>
  elements.map((e) => {
    const response = e.completionResponse;
    return response.OffsetCheckpoint !== undefined
      ? `c${response.OffsetCheckpoint.value.offset}`
      : `u${response.Completion.value.offset}`;
  });

/**
 * Issue 15, item 1, as a client of the gateway sees it with the embedded sandbox's defaults
 * (Canton's one-minute idle checkpoint timeout): an idle completion stream gets one checkpoint,
 * so a list twin with an idle timeout ends and a WebSocket is not sent one per second.
 */
describe("offset checkpoints through the gateway (sandbox defaults)", () => {
  let stack: Stack;
  let bank: string;
  let bankToken: string;
  let completionOffset: number;
  before(async () => {
    stack = await startStack();
    bank = await allocate(stack, "bank");
    bankToken = await userFor(stack, "bank-user", [bank]);
    const created = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      {
        commandId: "checkpoint-1",
        userId: "bank-user",
        actAs: [bank],
        commands: [
          {
            CreateCommand: {
              templateId: IOU,
              createArguments: { issuer: bank, owner: bank, currency: "EUR", amount: "1", observers: [] },
            },
          },
        ],
      },
      bankToken,
    );
    strictEqual(created.status, 200);
    completionOffset = created.body.completionOffset;
  });
  after(() => stack.stop());

  it("ends the completions list twin with stream_idle_timeout_ms=2000: the completion, one checkpoint", async () => {
    const response = await stack.request("/v2/commands/completions?stream_idle_timeout_ms=2000", {
      method: "POST",
      body: JSON.stringify({ userId: "bank-user", parties: [bank], beginExclusive: 0 }),
      token: bankToken,
      // A published client gives up about here; the old sandbox kept the list open for ever.
      signal: AbortSignal.timeout(20_000),
    });
    strictEqual(response.status, 200);
    const elements = (await response.json()) as Json[];
    deepStrictEqual(kinds(elements), [`u${completionOffset}`, `c${completionOffset}`]);
  });

  it("sends a WebSocket consumer of an idle completion stream one checkpoint, not one per second", async () => {
    const frames = await framesFor(
      stack,
      "/v2/commands/completions",
      { userId: "bank-user", parties: [bank], beginExclusive: completionOffset },
      bankToken,
      3_500,
    );
    deepStrictEqual(kinds(frames), [`c${completionOffset}`]);
  });
});

/** The frames a WebSocket stream sends within `windowMs` of its query frame; then the client closes. */
function framesFor(
  stack: Stack,
  path: string,
  query: unknown,
  token: string,
  windowMs: number,
): Promise<Json[]> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${path}`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    const frames: Json[] = [];
    socket.on("open", () => {
      socket.send(JSON.stringify(query));
      setTimeout(() => socket.close(1000), windowMs);
    });
    socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8")) as Json));
    socket.on("close", () => resolve(frames));
    socket.on("error", reject);
  });
}
