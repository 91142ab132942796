import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { RawConnection } from "../http/raw-http.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import type { Stack } from "../support/stack.js";
import { stackWithInFlight } from "../support/stack-in-flight.js";
import { waitFor } from "../support/transport-harness.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, userFor } from "./ledger-client.js";

/** What the tests read of a 429's JsCantonError. */
interface Refusal {
  code: string;
  errorCategory: number;
  retryInfo: string | null;
  definiteAnswer: boolean | null;
  context: Record<string, string>;
  cause: string;
}

/** A POST /v2/users of `token`'s user whose body never finishes: in flight until its connection ends. */
async function heldRequest(stack: Stack, token: string): Promise<RawConnection> {
  const connection = await RawConnection.open(stack.gateway.port);
  connection.write(
    `POST /v2/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{"us`,
  );
  return connection;
}

const refusals = (stack: Stack, cap: string) =>
  gatewayMetric(stack.url, "ledger_gateway_limit_refusals_total", `cap="${cap}"`, 'reason="limit"');

describe("limits.http-in-flight-per-user over real sockets", () => {
  const { stack, inFlight } = stackWithInFlight(["--limits.http-in-flight-per-user", "2"]);
  let alice: string;
  let bob: string;
  before(async () => {
    alice = await userFor(stack(), "alice", []);
    bob = await userFor(stack(), "bob", []);
  });

  it("serves 2 requests of a user at once, refuses the third with 429 PARTICIPANT_BACKPRESSURE, and serves it again once one ends", async () => {
    const held = [await heldRequest(stack(), alice), await heldRequest(stack(), alice)];
    await waitFor("both requests in flight", () => inFlight() === 2);

    const refused = await stack().request("/v2/version", { token: alice });
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as Refusal;
    assert.equal(body.code, "PARTICIPANT_BACKPRESSURE");
    assert.equal(body.errorCategory, 2);
    assert.equal(body.retryInfo, "1 second");
    assert.equal(body.definiteAnswer, false);
    assert.deepEqual(body.context, { limit: "limits.http-in-flight-per-user", value: "2", reason: "limit" });
    assert.doesNotMatch(body.cause, /alice/);
    assert.equal(await refusals(stack(), "http-in-flight-per-user"), 1);

    // Another user, and a request without a token (no user: no per-user cap), are served.
    assert.equal((await stack().request("/v2/version", { token: bob })).status, 200);
    assert.notEqual((await stack().request("/v2/version", { token: null })).status, 429);

    // The client leaves one of its requests: its slot is back.
    held[0]?.destroy();
    await waitFor("one request in flight", () => inFlight() === 1);
    assert.equal((await stack().request("/v2/version", { token: alice })).status, 200);
    // ... and so is the slot of a request answered.
    assert.equal((await stack().request("/v2/version", { token: alice })).status, 200);
    held[1]?.destroy();
    await waitFor("no request in flight", () => inFlight() === 0);
    assert.equal(await refusals(stack(), "http-in-flight-per-user"), 1);
  });
});

describe("limits.commands-per-second-per-user over real sockets", () => {
  const { stack } = stackWithInFlight([
    "--limits.commands-per-second-per-user",
    "1",
    "--limits.commands-burst-per-user",
    "2",
  ]);
  // Refused by validation after its token was taken: the bucket counts submissions, not successes.
  const submit = (token: string) =>
    stack().request("/v2/commands/async/submit", { method: "POST", body: "{}", token });

  const users: Record<string, string> = {};
  before(async () => {
    for (const id of ["carol", "dave", "erin", "frank"]) users[id] = await userFor(stack(), id, []);
  });

  it("takes a burst of 2 submissions, refuses the third with 429 and a retryInfo, and takes one again after it", async () => {
    const alice = users.carol as string;
    assert.equal((await submit(alice)).status, 400);
    assert.equal((await submit(alice)).status, 400);
    const refused = await submit(alice);
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as Refusal;
    assert.equal(body.code, "PARTICIPANT_BACKPRESSURE");
    assert.equal(body.context.limit, "limits.commands-per-second-per-user");
    const retry = /^(\d+) milliseconds?$|^1 second$/.exec(body.retryInfo ?? "");
    assert.ok(retry, `retryInfo ${body.retryInfo}`);
    const retryMs = retry[1] === undefined ? 1000 : Number(retry[1]);
    assert.ok(retryMs > 0 && retryMs <= 1000, `retry after ${retryMs} ms`);
    assert.equal(await refusals(stack(), "commands-per-second-per-user"), 1);

    // Only submissions: another route, and the completions stream under /v2/commands, are not paced.
    assert.equal((await stack().request("/v2/version", { token: alice })).status, 200);
    const completions = await stack().request("/v2/commands/completions", {
      method: "POST",
      body: "{}",
      token: alice,
    });
    assert.notEqual(completions.status, 429);
    // Another user has a bucket of its own.
    assert.equal((await submit(users.dave as string)).status, 400);

    await new Promise((resolve) => setTimeout(resolve, retryMs + 20));
    assert.equal((await submit(alice)).status, 400);
    assert.equal((await submit(alice)).status, 429);
  });

  it("keeps the connection of a refused submission open: its small body is read, the next request served on it", async () => {
    const connection = await RawConnection.open(stack().gateway.port);
    const submission = (token: string) =>
      `POST /v2/commands/async/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    try {
      for (let i = 1; i <= 3; i++) {
        connection.write(submission(users.frank as string));
        await connection.untilResponses(i);
      }
      const [first, second, refused] = connection.responses();
      assert.deepEqual([first?.status, second?.status, refused?.status], [400, 400, 429]);
      assert.notEqual(refused?.headers.connection, "close");
      connection.write(
        `GET /v2/version HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${users.frank}\r\n\r\n`,
      );
      await connection.untilResponses(4);
      assert.equal(connection.responses()[3]?.status, 200);
      assert.equal(connection.closed, false);
    } finally {
      connection.destroy();
    }
  });

  it("paces the interactive submission's execute routes too", async () => {
    const erin = users.erin as string;
    const execute = () =>
      stack().request("/v2/interactive-submission/execute", { method: "POST", body: "{}", token: erin });
    assert.equal((await execute()).status, 400);
    assert.equal((await submit(erin)).status, 400);
    assert.equal((await execute()).status, 429);
  });
});

describe("limits.streams-per-user over HTTP list twins", () => {
  const { stack, inFlight } = stackWithInFlight(["--limits.streams-per-user", "1"]);
  let party: string;
  let frank: string;
  let grace: string;

  before(async () => {
    party = await allocate(stack(), "quota_streams");
    frank = await userFor(stack(), "frank", [], [party]);
    grace = await userFor(stack(), "grace", [], [party]);
  });

  /** A list twin of every update of the party up to the ledger's end: answered at once. */
  const listTwin = (token: string) =>
    stack().request("/v2/updates", {
      method: "POST",
      body: JSON.stringify(updatesRequest(partyFilter(party), 0, 1)),
      token,
    });

  it("holds a streamed list twin as a stream until its client leaves: a second is refused, then served", async () => {
    const leave = new AbortController();
    // Open-ended, NDJSON, with an idle wait longer than the test: it stays open until the client leaves.
    const open = stack()
      .request("/v2/updates?stream_idle_timeout_ms=600000", {
        method: "POST",
        body: JSON.stringify(updatesRequest(partyFilter(party))),
        headers: { accept: "application/x-ndjson" },
        token: frank,
        signal: leave.signal,
      })
      .catch(() => undefined);
    await waitFor("the streamed list twin in flight", () => inFlight() === 1);

    const refused = await listTwin(frank);
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as Refusal;
    assert.equal(body.code, "MAXIMUM_NUMBER_OF_STREAMS");
    assert.equal(body.errorCategory, 2);
    assert.equal(body.retryInfo, "1 second");
    assert.deepEqual(body.context, { limit: "limits.streams-per-user", value: "1", reason: "limit" });
    assert.equal(await refusals(stack(), "streams-per-user"), 1);
    // Another user's stream, and the same user's unary requests, are not affected.
    assert.equal((await listTwin(grace)).status, 200);
    assert.equal((await stack().request("/v2/version", { token: frank })).status, 200);

    leave.abort();
    await open;
    await waitFor("the streamed list twin ended", () => inFlight() === 0);
    assert.equal((await listTwin(frank)).status, 200);
    // An answered list twin gave its stream back too.
    assert.equal((await listTwin(frank)).status, 200);
  });

  it("gives the stream back when the ledger refuses the list twin", async () => {
    const refused = await stack().request("/v2/updates", {
      method: "POST",
      body: JSON.stringify(updatesRequest(partyFilter("nobody::1220"), 0, 1)),
      token: frank,
    });
    assert.ok(refused.status >= 400 && refused.status !== 429, `status ${refused.status}`);
    assert.equal((await listTwin(frank)).status, 200);
    assert.equal((await listTwin(frank)).status, 200);
  });
});
