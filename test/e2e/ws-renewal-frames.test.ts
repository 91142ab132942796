import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { updatesRequest } from "../support/update-requests.js";
import { allocate, createIouTransaction, userFor, wildcard } from "./ledger-client.js";

interface Frame {
  code?: string;
  cause?: string;
  context?: Record<string, string>;
  update?: { Transaction?: { value: { commandId: string } } };
}

/**
 * Issue 35, finding F7: a frame after the query that is a JSON object with a `token` member is a
 * renewal frame, and one whose token is no non-empty string was ignored, the client never told
 * that its renewal did not happen. It gets a renewal-refused error frame now, and the stream goes
 * on; frames that are no renewal at all stay ignored, as Canton ignores them.
 */
describe("renewal frames whose token is not a JWT text", () => {
  let stack: Stack;
  let party: string;
  let writer: string;
  let reader: string;
  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "renewframes");
    writer = await userFor(stack, "renewframes-writer", [party]);
    reader = await userFor(stack, "renewframes-reader", [], [party]);
  });
  after(() => stack.stop());

  it("refuses each with INVALID_ARGUMENT marked token_renewal: refused, ignores other frames, and goes on", async () => {
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${reader}`,
    ]);
    const frames: Frame[] = [];
    socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8")) as Frame));
    await once(socket, "open");
    socket.send(JSON.stringify(updatesRequest(wildcard([party]))));
    // Not renewal frames: no answer to any of them.
    for (const ignored of ['"hello"', "[1]", '{"other":1}', "not json", "42"]) socket.send(ignored);
    const malformed = ['{"token":""}', '{"token":12345}', '{"token":{"nested":"x"}}', '{"token":null}'];
    for (const frame of malformed) socket.send(frame);

    const committed = await createIouTransaction(stack, writer, "after-bad-renewals", {
      issuer: party,
      owner: party,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
    const delivered = () =>
      frames.some((f) => f.update?.Transaction?.value.commandId === "after-bad-renewals");
    const refusals = () => frames.filter((f) => f.code !== undefined);
    // A socket's frames are read in order: once the last refusal is there, every ignored one was read.
    await until(() => delivered() && refusals().length >= malformed.length, {
      observed: () => JSON.stringify(frames),
    });

    const errors = refusals();
    assert.equal(errors.length, malformed.length, JSON.stringify(errors));
    for (const error of errors) {
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.equal(error.context?.token_renewal, "refused");
      assert.match(
        String(error.cause),
        /^Invalid value for: token renewal frame \(token must be a non-empty string/,
      );
    }
    assert.deepEqual(
      errors.map((e) => /got (.*)\)$/.exec(String(e.cause))?.[1]),
      ["an empty string", "a JSON number", "a JSON object", "null"],
    );
    assert.equal(socket.readyState, WebSocket.OPEN);
    socket.close(1000);
    await once(socket, "close");
  });
});
