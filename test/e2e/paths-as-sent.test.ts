import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

/**
 * Issue 22 item 5: paths as clients send them. A client configured with an origin that ends in
 * a slash, joining it with a path that starts with one (as a published wallet SDK does), sends
 * `//v2/updates`; Canton's HTTP layer skips empty path segments and serves it, and so does the
 * gateway, on HTTP and on WebSocket upgrades.
 */
describe("paths with empty segments, as clients join them", () => {
  let stack: Stack;
  /** The client's configured base URL, origin-only with its trailing slash. */
  let base: string;
  /** As the SDK joins them: base + "/" + path. */
  const joined = (path: string) => `${base}/${path.replace(/^\//, "")}`;

  before(async () => {
    stack = await startStack();
    base = `${stack.url}/`;
  });
  after(() => stack.stop());

  it("serves GET //v2/version and /v2//version as /v2/version", async () => {
    const expected = await (await stack.request("/v2/version")).json();
    for (const url of [joined("/v2/version"), `${stack.url}/v2//version`]) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${stack.token}` } });
      assert.equal(new URL(url).pathname.includes("//"), true, url);
      assert.equal(res.status, 200, url);
      assert.deepEqual(await res.json(), expected, url);
    }
  });

  it("upgrades ws://…//v2/updates and streams it", async () => {
    const party = (
      (await (
        await stack.request("/v2/parties", { method: "POST", body: JSON.stringify({ partyIdHint: "paths" }) })
      ).json()) as { partyDetails: { party: string } }
    ).partyDetails.party;
    const created = await stack.request("/v2/commands/submit-and-wait", {
      method: "POST",
      token: tokenFor(`actAs-${party}`),
      body: JSON.stringify(tickCommands(`paths-${Date.now()}`, party, 1)),
    });
    const end = ((await created.json()) as { completionOffset: number }).completionOffset;
    const url = joined("/v2/updates").replace(/^http/, "ws");
    assert.ok(url.includes("//v2/updates"), url);
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${tokenFor(`actAs-${party}`)}`]);
    const frames: unknown[] = [];
    socket.on("open", () => socket.send(JSON.stringify(updatesRequest(partyFilter(party), 0, end))));
    socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
    const code = await new Promise<number>((resolve, reject) => {
      socket.on("close", resolve);
      socket.on("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    assert.equal(code, 1000, JSON.stringify(frames));
    const offsets = frames.map(
      (frame) =>
        (frame as { update?: { Transaction?: { value: { offset: number } } } }).update?.Transaction?.value
          .offset,
    );
    assert.deepEqual(offsets, [end], JSON.stringify(frames));
  });

  it("answers an upgrade on a path that is no stream as HTTP, as before: the route's answer, no socket", async () => {
    const answer = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(joined(path).replace(/^http/, "ws"), {
          headers: { authorization: `Bearer ${stack.token}` },
        });
        socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.on("open", () => reject(new Error(`${path} upgraded`)));
        socket.on("error", () => undefined);
      });
    assert.equal(await answer("/v2/version"), 200);
    assert.equal(await answer("/v2/no-such-stream"), 404);
  });
});
