import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { type StreamedFormat, StreamedReader } from "./streamed-reader.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON answers loosely
type Json = Record<string, any>;

const SECRET = "streamed-answer-authorization-secret";
const RECHECK_MS = 1000;
/** The invariant's bound (a yes younger than twice the re-check interval), and room for a loaded machine. */
const REFUSED_WITHIN_MS = 2 * RECHECK_MS + 3000;
const token = (user: string) => signToken(user, { key: SECRET });
const IOU = "#gateway-samples:Iou:Iou";
/** Canton's code for a re-check the ledger refused; the ledger's own refusal is accepted too. */
const REFUSED = ["STALE_STREAM_AUTHORIZATION", "PERMISSION_DENIED"];
const UPDATES_CALL = "UpdateService/GetUpdates";
const readAs = (party: string) => ({ kind: { CanReadAs: { value: { party } } } });

/** A stack whose sandbox checks tokens (HS256) and whose gateway re-checks streams every second. */
async function securedStack(): Promise<Stack> {
  return startStack(
    ["--websocket-config.stream-authorization-recheck-interval", `${RECHECK_MS}ms`],
    {},
    { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
  );
}

async function api(stack: Stack, method: string, path: string, body?: unknown): Promise<Json> {
  const init = body === undefined ? { method } : jsonBody(method, body);
  const res = await stack.request(path, { ...init, token: token("participant_admin") });
  const text = await res.text();
  assert.equal(res.status, 200, `${method} ${path}: ${text}`);
  return JSON.parse(text) as Json;
}

/**
 * NDJSON and server-sent events answers of a list twin are re-checked as WebSocket subscribers
 * are (issue 35, attack 5 (b)), over the real gateway and sandbox: a reader whose right is
 * revoked gets the refusal as its answer's last element, and nothing committed after it.
 */
describe("streamed answers are re-checked: a revoked reader's answer ends", () => {
  let stack: Stack;
  let alice: string;
  let commands = 0;
  /** One new transaction visible to alice; its update id. */
  const commit = async (): Promise<string> => {
    commands += 1;
    const res = await stack.request("/v2/commands/submit-and-wait-for-transaction", {
      ...jsonBody("POST", {
        commands: {
          commandId: `streamed-authorization-${commands}`,
          actAs: [alice],
          commands: [
            {
              CreateCommand: {
                templateId: IOU,
                createArguments: {
                  issuer: alice,
                  owner: alice,
                  currency: "EUR",
                  amount: String(commands),
                  observers: [],
                },
              },
            },
          ],
        },
      }),
      token: token("writer"),
    });
    const reply = (await res.json()) as Json;
    assert.equal(res.status, 200, JSON.stringify(reply));
    return reply.transaction.updateId as string;
  };
  /** An open-ended request from the ledger end, as a live reader sends it. */
  const live = async () => ({
    beginExclusive: (await api(stack, "GET", "/v2/state/ledger-end")).offset as number,
    updateFormat: {
      includeTransactions: {
        eventFormat: { filtersByParty: { [alice]: {} } },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  });

  before(async () => {
    stack = await securedStack();
    alice = (await api(stack, "POST", "/v2/parties", { partyIdHint: "alice" })).partyDetails.party as string;
    const users: [string, unknown[]][] = [
      ["writer", [{ kind: { CanActAs: { value: { party: alice } } } }]],
      ["kept", [readAs(alice)]],
      ["revoked-ndjson", [readAs(alice)]],
      ["revoked-sse", [readAs(alice)]],
    ];
    for (const [id, rights] of users) await api(stack, "POST", "/v2/users", { user: { id }, rights });
  });
  after(() => stack.stop());

  for (const format of ["ndjson", "sse"] as const satisfies readonly StreamedFormat[]) {
    it(`${format}: ends with the refusal within twice the re-check interval, delivering nothing committed after it`, {
      timeout: 60_000,
    }, async () => {
      const path = "/v2/updates?stream_idle_timeout_ms=60000";
      const request = await live();
      const user = `revoked-${format}`;
      const revoked = new StreamedReader(stack, path, request, token(user), format);
      const kept = new StreamedReader(stack, path, request, token("kept"), format);
      const first = await commit();
      await Promise.all([revoked.received(first), kept.received(first)]);

      await api(stack, "PATCH", `/v2/users/${user}/rights`, { userId: user, rights: [readAs(alice)] });
      const revokedAt = performance.now();
      // Transactions keep coming: none committed once the answer ended may reach the revoked reader.
      const committed: { updateId: string; at: number }[] = [];
      while (!revoked.done && performance.now() - revokedAt < 15_000) {
        committed.push({ updateId: await commit(), at: performance.now() });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.ok(
        revoked.done,
        `still open 15 s after the revocation: ${revoked.updateIds.length} transactions`,
      );
      const end = await revoked.ended;

      assert.equal(end.status, 200);
      assert.equal(end.complete, true, "ended by the gateway with its last chunk");
      const last = revoked.elements.at(-1);
      assert.ok(REFUSED.includes(last?.code), JSON.stringify(last));
      if (format === "sse") assert.equal(revoked.eventNames.at(-1), "JsCantonError");
      assert.ok(
        end.at - revokedAt <= REFUSED_WITHIN_MS,
        `ended ${Math.round(end.at - revokedAt)} ms after the revocation`,
      );
      const after = committed.filter((c) => c.at > end.at).map((c) => c.updateId);
      assert.deepEqual(
        revoked.updateIds.filter((id) => after.includes(id)),
        [],
        "nothing committed after the end",
      );
      assert.equal(revoked.updateIds[0], first);

      // The other reader of the same request goes on, with everything.
      const next = await commit();
      await kept.received(next);
      assert.deepEqual(kept.updateIds, [first, ...committed.map((c) => c.updateId), next]);
      assert.equal(kept.done, false);
      kept.close();
    });
  }
});

/**
 * A refusal before the first element: the answer's status has not gone out, so the error is the
 * answer, as any request's is. On a fresh ledger (its end at offset 0) a stream from the begin
 * gets no element, not even a checkpoint, until something is committed, and there is no range to
 * ask the ledger about: the reader's re-checks ask whether its token's claims resolve. Its right
 * revoked meanwhile, the first element committed afterwards waits for a yes on the reader's token
 * for its request, which the ledger refuses: the answer is that refusal, with no element.
 */
describe("a streamed answer refused before its first element", () => {
  const anyParty = { kind: { CanReadAsAnyParty: { value: {} } } };
  /** A fresh ledger for each: the other's transactions would be its first elements. */
  let stack: Stack;
  beforeEach(async () => {
    stack = await securedStack();
  });
  afterEach(() => stack.stop());

  for (const format of ["ndjson", "sse"] as const satisfies readonly StreamedFormat[]) {
    it(`${format}: is answered with the refusal's HTTP status and JsCantonError`, {
      timeout: 60_000,
    }, async () => {
      const user = `early-${format}`;
      await api(stack, "POST", "/v2/users", { user: { id: user }, rights: [anyParty] });
      const request = {
        beginExclusive: 0,
        updateFormat: {
          includeTransactions: {
            eventFormat: { filtersForAnyParty: { cumulative: [] } },
            transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
          },
        },
      };
      const calls = stack.sandbox.calls;
      const started = calls.started(UPDATES_CALL);
      const reader = new StreamedReader(
        stack,
        "/v2/updates?stream_idle_timeout_ms=60000",
        request,
        token(user),
        format,
      );
      // Its own call is open, admitted by the ledger before the revocation.
      await until(() => calls.started(UPDATES_CALL) > started && calls.open(UPDATES_CALL) >= 1, {
        budgetMs: 30_000,
        observed: () => `${calls.started(UPDATES_CALL) - started} started, ${calls.open(UPDATES_CALL)} open`,
      });
      await api(stack, "PATCH", `/v2/users/${user}/rights`, { userId: user, rights: [anyParty] });
      // Past the interval: the call's admission is no longer a fresh yes.
      await new Promise((resolve) => setTimeout(resolve, 2 * RECHECK_MS + 100));
      assert.equal(
        reader.done,
        false,
        `answered before anything was committed: ${reader.status} ${reader.rest}`,
      );
      // Now the ledger moves (a party, then a transaction): whatever reaches the reader's call
      // (a checkpoint, the transaction) waits for a yes the ledger no longer gives.
      const party = (await api(stack, "POST", "/v2/parties", { partyIdHint: `early-${format}` })).partyDetails
        .party as string;
      await api(stack, "POST", "/v2/users", {
        user: { id: `early-writer-${format}` },
        rights: [{ kind: { CanActAs: { value: { party } } } }],
      });
      const res = await stack.request("/v2/commands/submit-and-wait-for-transaction", {
        ...jsonBody("POST", {
          commands: {
            commandId: `early-${format}`,
            actAs: [party],
            commands: [
              {
                CreateCommand: {
                  templateId: IOU,
                  createArguments: {
                    issuer: party,
                    owner: party,
                    currency: "EUR",
                    amount: "1",
                    observers: [],
                  },
                },
              },
            ],
          },
        }),
        token: token(`early-writer-${format}`),
      });
      assert.equal(res.status, 200, await res.text());
      const end = await reader.ended;

      assert.notEqual(end.status, 200);
      assert.equal(
        reader.elements.length,
        0,
        "the transaction committed after the revocation never reached it",
      );
      const body = JSON.parse(reader.rest) as Json;
      assert.ok(REFUSED.includes(body.code), reader.rest);
      assert.equal(typeof body.errorCategory, "number");
    });
  }
});
