import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { MAX_REQUEST_JSON_DEPTH } from "../../src/endpoints/request-json.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** A request's JSON text with `nested` as the value of an extra member the schema lets pass. */
const withExtra = (request: unknown, nested: string) =>
  `{"extra":${nested},${JSON.stringify(request).slice(1)}`;

/** A /v2/updates socket that sends `text` as its query frame, as is; its frames once closed. */
function updatesSocketSending(
  gatewayUrl: string,
  token: string,
  text: string,
): Promise<{ frames: Record<string, unknown>[]; code: number }> {
  const socket = new WebSocket(`${gatewayUrl.replace(/^http/, "ws")}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  const frames: Record<string, unknown>[] = [];
  socket.on("open", () => socket.send(text));
  socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
  socket.on("error", () => undefined);
  return new Promise((resolve) => socket.on("close", (code) => resolve({ frames, code })));
}

const TOO_DEEP = `Invalid value for: body (nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels)`;

describe("query frames and bodies nested too deeply", () => {
  let stack: Stack;
  let reader: string;
  let party: string;
  let ledgerEnd: number;
  const logged = capturingLogger();
  /** What the gateway logged as its own fault (`... failed in the gateway`) since entry `from`. */
  const faultsSince = (from: number) =>
    logged
      .entries()
      .slice(from)
      .filter((entry) => (entry.level as number) >= 50);

  before(async () => {
    stack = await startStack([], {}, { gatewayLog: logged.log });
    const allocated = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "deep" }));
    party = ((await allocated.json()) as { partyDetails: { party: string } }).partyDetails.party;
    const user = { id: "deep-reader", primaryParty: party, isDeactivated: false, identityProviderId: "" };
    const rights = [{ kind: { CanReadAs: { value: { party } } } }];
    strictEqual((await stack.request("/v2/users", jsonBody("POST", { user, rights }))).status, 200);
    reader = tokenFor("deep-reader");
    ledgerEnd = ((await (await stack.request("/v2/state/ledger-end")).json()) as { offset: number }).offset;
  });
  after(() => stack.stop());

  for (const [shape, nested] of [
    ["200,000 arrays", arrays(200_000)],
    ["150,000 objects", objects(150_000)],
  ] as const) {
    it(`refuses a WebSocket query frame holding ${shape} with an INVALID_ARGUMENT error frame, no gateway fault`, async () => {
      const logFrom = logged.entries().length;
      const text = withExtra(updatesRequest(partyFilter(party)), nested);
      const { frames, code } = await updatesSocketSending(stack.url, reader, text);
      deepStrictEqual(
        frames.map(({ code, cause, errorCategory, grpcCodeValue }) => ({
          code,
          cause,
          errorCategory,
          grpcCodeValue,
        })),
        [{ code: "INVALID_ARGUMENT", cause: TOO_DEEP, errorCategory: 8, grpcCodeValue: 3 }],
      );
      strictEqual(code, 1000);
      deepStrictEqual(faultsSince(logFrom), []);
    });
  }

  it("refuses a bare deep frame (no request around it) the same way", async () => {
    const logFrom = logged.entries().length;
    const { frames } = await updatesSocketSending(stack.url, reader, arrays(200_000));
    deepStrictEqual(
      frames.map(({ code, cause }) => ({ code, cause })),
      [{ code: "INVALID_ARGUMENT", cause: TOO_DEEP }],
    );
    deepStrictEqual(faultsSince(logFrom), []);
  });

  for (const path of ["/v2/updates", "/v2/updates/flats", "/v2/state/active-contracts", "/v2/users"]) {
    it(`answers POST ${path} with 200,000 levels 400 Invalid value for: body`, async () => {
      const logFrom = logged.entries().length;
      const body = withExtra(updatesRequest(partyFilter(party)), objects(200_000));
      const res = await stack.request(path, { method: "POST", body, token: reader });
      deepStrictEqual({ status: res.status, text: await res.text() }, { status: 400, text: TOO_DEEP });
      deepStrictEqual(faultsSince(logFrom), []);
    });
  }

  it("serves a request nested as deeply as the bound allows, over a socket and the list twin", async () => {
    const logFrom = logged.entries().length;
    // The request's own members already nest, so the extra member's depth fills the bound exactly.
    const request = updatesRequest(partyFilter(party), 0, ledgerEnd);
    const text = withExtra(request, arrays(MAX_REQUEST_JSON_DEPTH - 1));
    const { frames, code } = await updatesSocketSending(stack.url, reader, text);
    deepStrictEqual(
      frames.filter((frame) => "code" in frame),
      [],
    );
    strictEqual(code, 1000);
    const res = await stack.request("/v2/updates", { method: "POST", body: text, token: reader });
    strictEqual(res.status, 200, await res.clone().text());
    deepStrictEqual(Array.isArray(await res.json()), true);
    deepStrictEqual(faultsSince(logFrom), []);
  });
});
