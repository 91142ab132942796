import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { allocate, call, createIouTransaction, userFor, wildcard } from "../e2e/ledger-client.js";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";

/** One upgrade of /v2/updates: the open socket, or the refusal's status, Retry-After and body. */
type Upgrade =
  | { kind: "open"; socket: WebSocket }
  | {
      kind: "refused";
      status: number;
      retryAfter: string | undefined;
      body: { code?: string; retryInfo?: string };
    };

function upgrade(stack: Stack, token = stack.token): Promise<Upgrade> {
  const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ kind: "open", socket }));
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response: IncomingMessage) => {
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      response.on("end", () =>
        resolve({
          kind: "refused",
          status: response.statusCode ?? 0,
          retryAfter: response.headers["retry-after"],
          body: JSON.parse(text),
        }),
      );
    });
  });
}

/** The query frame of what `eventFormat` reads after `begin`, in ACS-delta shape. */
function updatesAfter(begin: number, eventFormat: unknown) {
  return {
    beginExclusive: begin,
    updateFormat: { includeTransactions: { eventFormat, transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" } },
  };
}

/** Upgrades until one opens, each refusal's Retry-After waited out as a client would. */
async function upgradeHonouringRetryAfter(stack: Stack): Promise<{ socket: WebSocket; refusals: number }> {
  for (let refusals = 0; ; refusals++) {
    const attempt = await upgrade(stack);
    if (attempt.kind === "open") return { socket: attempt.socket, refusals };
    strictEqual(attempt.status, 503);
    await new Promise((resolve) => setTimeout(resolve, Number(attempt.retryAfter) * 1000));
  }
}

/**
 * A gateway whose worker upgrades `perSecond` a second, each waiting at most `maxWait` (verifying
 * tokens itself, and its sandbox too, when given a secret), started before the describing block's
 * tests and stopped after them, with the sockets they opened.
 */
function pacedGateway(perSecond: number, maxWait: string, verifyingSecret?: string, more: string[] = []) {
  const paced = { stack: undefined as unknown as Stack, sockets: [] as WebSocket[] };
  before(async () => {
    const pace = [
      "--websocket-config.upgrades-per-second",
      String(perSecond),
      "--websocket-config.upgrade-max-wait",
      maxWait,
      ...more,
    ];
    paced.stack =
      verifyingSecret === undefined
        ? await startStack(pace)
        : await startStack(
            [
              ...["--auth.mode", "hs256", "--auth.secret", verifyingSecret, "--auth.audience", AUDIENCE],
              ...pace,
            ],
            {},
            { sandbox: { auth: { mode: "hs256", secret: verifyingSecret, audience: AUDIENCE } } },
          );
  });
  after(async () => {
    for (const socket of paced.sockets) socket.terminate();
    await paced.stack.stop();
  });
  return paced;
}

describe("WebSocket upgrades paced per worker (websocket-config.upgrades-per-second)", () => {
  // 10 a second, each waiting at most 300 ms: of a crowd at once, 1 goes now (a burst of 50 ms
  // of 10/s), 3 wait their turn, the rest are refused; one user may hold half of those 4.
  const gateway = pacedGateway(10, "300ms");

  it("refuses a crowd past the pace with 503, Retry-After and a JsCantonError, and lets each in when it retries after it", async () => {
    const crowd = await Promise.all(Array.from({ length: 12 }, () => upgrade(gateway.stack)));
    const opened = crowd.filter((u) => u.kind === "open");
    const refused = crowd.filter((u) => u.kind === "refused");
    for (const u of opened) gateway.sockets.push(u.socket);
    strictEqual(opened.length, 2);
    strictEqual(refused.length, 10);
    for (const refusal of refused) {
      const seconds = Number(refusal.retryAfter);
      ok(Number.isInteger(seconds) && seconds >= 1, `Retry-After ${refusal.retryAfter}`);
      deepStrictEqual(
        { status: refusal.status, code: refusal.body.code, retryInfo: refusal.body.retryInfo },
        {
          status: 503,
          code: "WEBSOCKET_UPGRADES_PACED",
          retryInfo: `${seconds} second${seconds === 1 ? "" : "s"}`,
        },
      );
    }
    // Told to come back one slot (100 ms) apart, in the order refused: the last, latest.
    ok(Number(refused.at(-1)?.retryAfter) >= Number(refused[0]?.retryAfter)); // The refused come back after the Retry-After they were given, one after the other: every
    // one gets in.
    await new Promise((resolve) => setTimeout(resolve, Number(refused[0]?.retryAfter) * 1000));
    let refusalsOnRetry = 0;
    for (let i = 0; i < refused.length; i++) {
      const { socket, refusals } = await upgradeHonouringRetryAfter(gateway.stack);
      gateway.sockets.push(socket);
      refusalsOnRetry += refusals;
    }
    strictEqual(gateway.sockets.length, 12);
    // Spaced by their own round trips, most retries find a free slot at once.
    ok(refusalsOnRetry < refused.length, `${refusalsOnRetry} refusals on retry`);
    for (const socket of gateway.sockets) strictEqual(socket.readyState, WebSocket.OPEN);
  });
});

describe("WebSocket upgrade pace shared between users", () => {
  // 10 a second, each waiting at most 2 s: 21 taken at once, 10 of them one user's. Room to
  // spare for the pace slowing down on a busy machine (it follows the worker's lag).
  const gateway = pacedGateway(10, "2s");

  it("leaves half of the pace to other users while one user floods it", async () => {
    const alice = await allocate(gateway.stack, "pacing-alice");
    const [mallory, bob, carol] = await Promise.all([
      userFor(gateway.stack, "pacing-mallory", [alice]),
      userFor(gateway.stack, "pacing-bob", [alice]),
      userFor(gateway.stack, "pacing-carol", [alice]),
    ]);
    const flood = Promise.all(Array.from({ length: 30 }, () => upgrade(gateway.stack, mallory)));
    // Sent right behind the flood, which arrived first: FCFS would refuse both.
    const others = await Promise.all([upgrade(gateway.stack, bob), upgrade(gateway.stack, carol)]);
    const flooded = await flood;
    for (const u of [...flooded, ...others]) if (u.kind === "open") gateway.sockets.push(u.socket);
    deepStrictEqual(
      others.map((u) => u.kind),
      ["open", "open"],
    );
    deepStrictEqual(flooded.map((u) => (u.kind === "open" ? "open" : u.status)).sort(), [
      ...Array(20).fill(503),
      ...Array(10).fill("open"),
    ]);
  });
});

describe("WebSocket upgrade pace against a flood of forged tokens (the gateway verifies: auth.mode hs256)", () => {
  const SECRET = "pacing-secret";
  // 20 a second, each waiting at most 2 s: 41 taken at once.
  const gateway = pacedGateway(20, "2s", SECRET);

  it("lets a user with a valid token in right after 200 upgrades of forged tokens, each another made-up user, and tells none to wait minutes", async () => {
    // No key at all: a wrong signature, another `sub` each (each would be a user of its own).
    const forged = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        upgrade(gateway.stack, signToken(`forged-${i}`, { key: "not-the-secret" })),
      ),
    );
    for (const u of forged) if (u.kind === "open") gateway.sockets.push(u.socket);
    deepStrictEqual(
      [...new Set(forged.map((u) => (u.kind === "open" ? "open" : u.status)))].filter(
        (s) => s !== 401 && s !== 503,
      ),
      [],
    );
    for (const u of forged)
      if (u.kind === "refused" && u.status === 503)
        ok(Number(u.retryAfter) <= 10, `Retry-After ${u.retryAfter}`);
    // The forged took no slot once their tokens were refused: five upgrades of a real user go in.
    const token = signToken("participant_admin", { key: SECRET });
    const alice = await Promise.all(Array.from({ length: 5 }, () => upgrade(gateway.stack, token)));
    for (const u of alice) if (u.kind === "open") gateway.sockets.push(u.socket);
    deepStrictEqual(
      alice.map((u) => (u.kind === "open" ? "open" : `${u.status} Retry-After ${u.retryAfter}`)),
      Array(5).fill("open"),
    );
  });
});

describe("WebSocket streams started at the pace, their sockets upgraded at once", () => {
  // 10 a second (a burst of one, then one each 100 ms), each waiting at most 5 s.
  const gateway = pacedGateway(10, "5s");

  /** A socket of `token` reading `party`'s updates from 0: when it opened and each frame came. */
  function reader(token: string, party: string, renewAtOnce = false) {
    const socket = new WebSocket(`${gateway.stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    gateway.sockets.push(socket);
    const frames: { at: number; frame: Record<string, unknown> }[] = [];
    const opened = new Promise<number>((resolve, reject) => {
      socket.once("open", () => {
        socket.send(JSON.stringify(updatesAfter(0, wildcard([party]))));
        if (renewAtOnce) socket.send(JSON.stringify({ token }));
        resolve(performance.now());
      });
      socket.once("unexpected-response", (_request, response: IncomingMessage) =>
        reject(new Error(`refused ${response.statusCode}`)),
      );
      socket.once("error", reject);
    });
    const firstElement = new Promise<number>((resolve) =>
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
        frames.push({ at: performance.now(), frame });
        if (frame.update !== undefined) resolve(performance.now());
      }),
    );
    return { opened, firstElement, frames };
  }

  it("opens a crowd's sockets at once and starts their streams in turn, and refuses a renewal frame sent before the start", async () => {
    const party = await allocate(gateway.stack, "paced-starts");
    const token = await userFor(gateway.stack, "paced-starts-user", [party]);
    const created = await createIouTransaction(gateway.stack, token, "paced-starts-1", {
      issuer: party,
      owner: party,
      currency: "EUR",
      amount: "1",
    });
    strictEqual(created.status, 200);
    // Past the pace's spare time of the set-up above: its turns are spent.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const crowd = Array.from({ length: 8 }, () => reader(token, party));
    const renewing = reader(token, party, true);
    const opened = await Promise.all([...crowd, renewing].map((r) => r.opened));
    const waiting = await gatewayMetric(gateway.stack.url, "ledger_gateway_ws_streams_waiting");
    const firsts = await Promise.all([...crowd, renewing].map((r) => r.firstElement));
    // The queue as operators see it: some waited when all were open, none once all started.
    ok(waiting >= 1, `${waiting} waiting once all were open`);
    strictEqual(await gatewayMetric(gateway.stack.url, "ledger_gateway_ws_streams_waiting"), 0);
    // Every socket was upgraded before the streams had all started: they waited upgraded, not
    // for their 101.
    ok(Math.max(...opened) < Math.max(...firsts) - 300, `opened ${opened} first elements ${firsts}`);
    // Nine starts at 10 a second after a burst of one: at least 700 ms from the first to the last.
    ok(Math.max(...firsts) - Math.min(...firsts) >= 700, `first elements ${firsts}`);
    // The renewal frame sent while its stream waited: refused with a clear frame, and the stream
    // still started, on its upgrade's token.
    const refusal = renewing.frames[0]?.frame as { code?: string; context?: Record<string, string> };
    deepStrictEqual(
      { code: refusal.code, renewal: refusal.context?.token_renewal },
      { code: "WEBSOCKET_UPGRADES_PACED", renewal: "refused" },
    );
    ok(renewing.frames.some(({ frame }) => frame.update !== undefined));
  });
});

describe("a stream that waited for its turn longer than twice the re-check interval", () => {
  // 5 a second, each waiting at most 20 s; the ledger asked again every second, so that a yes
  // older than 2 s is stale.
  const gateway = pacedGateway(5, "20s", undefined, [
    "--websocket-config.stream-authorization-recheck-interval",
    "1s",
  ]);

  it("starts with its grant's clock at its start: the wait was the gateway's, not the ledger's silence", async () => {
    const party = await allocate(gateway.stack, "paced-idle");
    const token = await userFor(gateway.stack, "paced-idle-user", [party]);
    const created = await createIouTransaction(gateway.stack, token, "paced-idle-1", {
      issuer: party,
      owner: party,
      currency: "EUR",
      amount: "1",
    });
    strictEqual(created.status, 200);
    const end = (
      await call<{ offset: number }>(gateway.stack, "GET", "/v2/state/ledger-end", undefined, token)
    ).body.offset;
    const url = `${gateway.stack.url.replace(/^http/, "ws")}/v2/updates`;
    const open = (query?: unknown, as = token) => {
      const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${as}`]);
      gateway.sockets.push(socket);
      if (query !== undefined) socket.once("open", () => socket.send(JSON.stringify(query)));
      return socket;
    };
    // 15 of the user's sockets take the next 3 s of turns (their queries never come).
    for (let i = 0; i < 15; i++) open();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Another user's stream starts in the next turn (the queue is served a user at a time): the
    // worker's re-check clock ticks from then on, so that one tick falls soon after the idle
    // stream's start, before its call's first message (the sandbox's first checkpoint, after
    // half a second). With the grant made at the query, that tick found it 3 s old and ended it.
    const other = await allocate(gateway.stack, "paced-idle-other");
    const otherToken = await userFor(gateway.stack, "paced-idle-other-user", [other]);
    open(updatesAfter(end, { filtersByParty: { [other]: {} } }), otherToken);
    // An idle stream (from the ledger's end, nothing after it): its turn comes some 3 s later.
    const idle = open(updatesAfter(end, { filtersByParty: { [party]: {} } }));
    const errors: string[] = [];
    idle.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as { code?: string };
      if (frame.code !== undefined) errors.push(frame.code);
    });
    let closed: number | undefined;
    idle.on("close", (code) => {
      closed = code;
    });
    // Past its turn and a few re-checks after it.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    deepStrictEqual({ errors, closed }, { errors: [], closed: undefined });
    strictEqual(idle.readyState, WebSocket.OPEN);
  });
});
