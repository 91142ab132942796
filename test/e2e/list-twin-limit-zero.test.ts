import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { updatesRequest } from "../support/update-requests.js";
import { allocate, call, createIouTransaction, userFor, wildcard } from "./ledger-client.js";

/**
 * Issue 35, finding F3: `?limit=0` answered `200 []` without asking the ledger, to no token, a
 * garbage one and a reader of nothing alike. A list of no elements is still an answer about the
 * reader: 200 only once the ledger admitted it, its refusal otherwise.
 *
 * Found from outside since (docs/security.md, "Tried from outside"): `?stream_idle_timeout_ms=0`
 * ends the wait before the ledger's first word, and the empty answer's verdict then asked only
 * the token's claims: `200 []` to a reader the ledger refuses the parties of, where Canton answers
 * 403 (updates from 0, the active contracts, completions; on 054621d the 403 case fails for
 * those three). The verdict now probes the request itself.
 */
for (const query of ["limit=0", "stream_idle_timeout_ms=0"])
  describe(`a list twin asked for no elements (${query}) answers only as the ledger judges the reader`, () => {
    let stack: Stack;
    let party: string;
    let reader: string;
    let stranger: string;
    let end: number;
    before(async () => {
      stack = await startStack();
      party = await allocate(stack, "limitzero");
      const writer = await userFor(stack, "limitzero-writer", [party]);
      reader = await userFor(stack, "limitzero-reader", [], [party]);
      stranger = await userFor(stack, "limitzero-stranger", [], []);
      const created = await createIouTransaction(stack, writer, "limitzero-iou", {
        issuer: party,
        owner: party,
        currency: "EUR",
        amount: "1",
      });
      strictEqual(created.status, 200, JSON.stringify(created.body));
      end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    });
    after(() => stack.stop());

    /** Each list twin: open-ended or bounded, with elements to read or none yet. */
    const requests = (): [string, string, unknown][] => [
      ["updates from the start (elements there)", "/v2/updates", updatesRequest(wildcard([party]), 0)],
      ["updates from the end (none yet)", "/v2/updates", updatesRequest(wildcard([party]), end)],
      [
        "active contracts (one there)",
        "/v2/state/active-contracts",
        { activeAtOffset: end, eventFormat: wildcard([party]) },
      ],
      ["completions", "/v2/commands/completions", { parties: [party], beginExclusive: 0 }],
    ];

    const statusOf = async (path: string, body: unknown, token: string | null, accept?: string) => {
      const response = await stack.request(`${path}?${query}`, {
        method: "POST",
        body: JSON.stringify(body),
        token,
        ...(accept === undefined ? {} : { headers: { accept } }),
      });
      return { status: response.status, text: await response.text() };
    };

    it("refuses a request without a token and one with a garbage token (401)", async () => {
      for (const [what, path, body] of requests()) {
        strictEqual((await statusOf(path, body, null)).status, 401, `${what}, no token`);
        strictEqual((await statusOf(path, body, "garbage.x.y")).status, 401, `${what}, garbage token`);
      }
    });

    it("refuses a user who may not read the filter's party (403)", async () => {
      for (const [what, path, body] of requests()) {
        const answer = await statusOf(path, body, stranger);
        strictEqual(answer.status, 403, `${what}: ${answer.text}`);
      }
    });

    it("answers a reader the ledger admits (with limit=0: [], though elements were there)", async () => {
      for (const [what, path, body] of requests()) {
        const answer = await statusOf(path, body, reader);
        strictEqual(answer.status, 200, `${what}: ${answer.text}`);
        // With no idle wait, elements that came within it may be in the answer.
        if (query === "limit=0") deepStrictEqual(JSON.parse(answer.text), [], what);
        else ok(Array.isArray(JSON.parse(answer.text)), what);
      }
    });

    it("streams (NDJSON, SSE) nothing to a reader the ledger admits and refuses the others", async () => {
      for (const accept of ["application/x-ndjson", "text/event-stream"]) {
        for (const [what, path, body] of requests()) {
          const label = `${what} as ${accept}`;
          strictEqual((await statusOf(path, body, "garbage.x.y", accept)).status, 401, label);
          strictEqual((await statusOf(path, body, stranger, accept)).status, 403, label);
          const admitted = await statusOf(path, body, reader, accept);
          strictEqual(admitted.status, 200, `${label}: ${admitted.text}`);
          if (query === "limit=0") strictEqual(admitted.text, "", label);
        }
      }
    });
  });
