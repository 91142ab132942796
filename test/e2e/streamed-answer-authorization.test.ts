import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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
 * gets no element, not even a checkpoint, until something is committed.
 */
describe("a streamed answer refused before its first element", () => {
  let stack: Stack;
  const anyParty = { kind: { CanReadAsAnyParty: { value: {} } } };

  before(async () => {
    stack = await securedStack();
    for (const format of ["ndjson", "sse"]) {
      await api(stack, "POST", "/v2/users", { user: { id: `early-${format}` }, rights: [anyParty] });
    }
  });
  after(() => stack.stop());

  for (const format of ["ndjson", "sse"] as const satisfies readonly StreamedFormat[]) {
    it(`${format}: is answered with the refusal's HTTP status and JsCantonError`, {
      timeout: 60_000,
    }, async () => {
      const user = `early-${format}`;
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
      // Its own call is open and the gateway has begun to ask the ledger about it again
      // (before the revocation): the refusal to come is a re-check's, not its call's admission.
      await until(() => calls.open(UPDATES_CALL) >= 1 && calls.started(UPDATES_CALL) >= started + 2, {
        budgetMs: 30_000,
        observed: () => `${calls.open(UPDATES_CALL)} open, ${calls.started(UPDATES_CALL)} started`,
      });
      assert.equal(reader.done, false, `answered before the revocation: ${reader.status} ${reader.rest}`);
      await api(stack, "PATCH", `/v2/users/${user}/rights`, { userId: user, rights: [anyParty] });
      const end = await reader.ended;

      assert.notEqual(end.status, 200);
      assert.equal(reader.elements.length, 0);
      const body = JSON.parse(reader.rest) as Json;
      assert.ok(REFUSED.includes(body.code), reader.rest);
      assert.equal(typeof body.errorCategory, "number");
    });
  }
});
