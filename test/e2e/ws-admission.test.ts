import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { GATEWAY_CLI, listeningPort } from "../support/gateway-cli.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { updatesRequest } from "../support/update-requests.js";
import { allocate, call, upgradeAs, userFor, wildcard, wsStream } from "./ledger-client.js";

/** Canton's redacted answer to a caller whose claims it does not resolve. */
const REDACTED_PERMISSION_DENIED = {
  code: "NA",
  cause: "A security-sensitive error has been received",
  correlationId: null,
  traceId: null,
  context: {},
  resources: [],
  errorCategory: -1,
  grpcCodeValue: 7,
  retryInfo: null,
  definiteAnswer: null,
};

/**
 * Issue 15 item 4: Canton resolves a WebSocket caller's claims before it upgrades, so a token
 * whose user the ledger does not resolve gets a plain HTTP answer and no socket.
 */
describe("WebSocket admission before the upgrade (real sandbox)", () => {
  let stack: Stack;
  let wsUrl: string;
  let alice: string;

  before(async () => {
    stack = await startStack();
    wsUrl = stack.url.replace(/^http/, "ws");
    alice = await allocate(stack, "alice");
  });
  after(() => stack.stop());

  /** The gateway's GetLedgerApiVersion calls so far: the upgrades' admissions. */
  const versionCalls = async () => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    const counts = text.match(
      /^ledger_gateway_grpc_client_call_duration_seconds_count\{[^}]*GetLedgerApiVersion[^}]*\} (\d+)$/gm,
    );
    return (counts ?? []).reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
  };

  /**
   * A stream of alice's on `token`, started: its socket holds the token, admitted at its upgrade.
   * From the ledger end (past 0: alice's allocation took an offset), so that its re-checks probe
   * its request (GetUpdates) rather than ask whether the token's claims resolve (the
   * GetLedgerApiVersion calls these tests count): they come at its token's phase of the re-check
   * clock, anywhere in the tests' windows.
   */
  const heldStream = async (token: string) => {
    const open = async () => gatewayMetric(stack.url, "ledger_gateway_ws_streams_open");
    const openBefore = await open();
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    assert.ok(end > 0, `ledger end ${end}`);
    const socket = new WebSocket(`${wsUrl}/v2/updates`, ["daml.ws.auth", `jwt.token.${token}`]);
    await once(socket, "open");
    socket.send(JSON.stringify(updatesRequest(wildcard([alice]), end)));
    await until(async () => (await open()) === openBefore + 1);
    return {
      close: async () => {
        socket.close();
        await until(async () => (await open()) === openBefore);
      },
    };
  };

  it("refuses a token of a user the ledger does not know: plain 403, redacted body, no 101", async () => {
    const answer = await upgradeAs(wsUrl, tokenFor("no-such-user"));
    assert.equal(answer.status, 403);
    assert.deepEqual({ ...answer.body, correlationId: null, traceId: null }, REDACTED_PERMISSION_DENIED);
    assert.match(String(answer.body?.traceId), /^[0-9a-f]{32}$/);
  });

  it("asks the ledger once for a crowd of one token upgrading together, and refuses a refused token's crowd every one", async () => {
    const token = await userFor(stack, "ws-crowd", [alice]);
    const before = await versionCalls();
    const crowd = await Promise.all(Array.from({ length: 40 }, () => upgradeAs(wsUrl, token)));
    assert.deepEqual(
      crowd.map((answer) => answer.status),
      crowd.map(() => 101),
    );
    const asked = (await versionCalls()) - before;
    assert.ok(asked >= 1 && asked < 40, `${asked} admission calls for 40 upgrades in flight together`);
    // Nothing is kept once answered: a later upgrade asks the ledger again.
    const lone = await versionCalls();
    assert.equal((await upgradeAs(wsUrl, token)).status, 101);
    assert.equal((await versionCalls()) - lone, 1);
    const refused = await Promise.all(
      Array.from({ length: 10 }, () => upgradeAs(wsUrl, tokenFor("no-such-user"))),
    );
    assert.deepEqual(
      refused.map((answer) => answer.status),
      refused.map(() => 403),
    );
  });

  it("upgrades a token that an open stream holds, admitted within the re-check interval, without asking again; asks once it closed", async () => {
    const token = await userFor(stack, "ws-held", [alice]);
    const held = await heldStream(token);

    const before = await versionCalls();
    const upgrades = [];
    for (let i = 0; i < 5; i += 1) upgrades.push((await upgradeAs(wsUrl, token)).status);
    assert.deepEqual(upgrades, [101, 101, 101, 101, 101]);
    assert.equal((await versionCalls()) - before, 0);
    // Another token of the same user is another question: asked.
    const other = await userFor(stack, "ws-held-other", [alice]);
    assert.equal((await upgradeAs(wsUrl, other)).status, 101);
    assert.equal((await versionCalls()) - before, 1);

    await held.close();
    assert.equal((await upgradeAs(wsUrl, token)).status, 101);
    assert.equal((await versionCalls()) - before, 2);
  });

  it("asks again for a held token once its admission is older than the re-check interval", async () => {
    const token = await userFor(stack, "ws-held-aging", [alice]);
    const held = await heldStream(token);
    const before = await versionCalls();
    assert.equal((await upgradeAs(wsUrl, token)).status, 101);
    assert.equal((await versionCalls()) - before, 0);
    // The stack's re-check interval: 5 s (the default).
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    assert.equal((await upgradeAs(wsUrl, token)).status, 101);
    assert.equal((await versionCalls()) - before, 1);
    await held.close();
  });

  it("refuses a deactivated user (403) and upgrades it while it is active", async () => {
    const token = await userFor(stack, "ws-soon-deactivated", [alice]);
    assert.deepEqual(await upgradeAs(wsUrl, token), { status: 101, protocol: "daml.ws.auth" });
    const patched = await call(stack, "PATCH", "/v2/users/ws-soon-deactivated", {
      user: { id: "ws-soon-deactivated", isDeactivated: true },
      updateMask: { paths: ["is_deactivated"] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const refused = await upgradeAs(wsUrl, token);
    assert.equal(refused.status, 403);
    assert.deepEqual({ ...refused.body, correlationId: null, traceId: null }, REDACTED_PERMISSION_DENIED);
  });

  it("upgrades a known user without rights for the party it asks for, whose query gets one PERMISSION_DENIED frame", async () => {
    // Which party the caller reads is in the query frame, after the upgrade: Canton too can only
    // answer that with an error frame.
    const token = await userFor(stack, "ws-no-rights", []);
    assert.deepEqual(await upgradeAs(wsUrl, token), { status: 101, protocol: "daml.ws.auth" });
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
    const { frames, code } = await wsStream(
      stack,
      "/v2/updates",
      updatesRequest(wildcard([alice]), 0, end),
      token,
    );
    assert.equal(frames.length, 1);
    assert.equal(frames[0]?.grpcCodeValue, 7);
    assert.equal(code, 1000);
  });
});

const UPGRADES = 600;
const CONCURRENCY = 10;
/**
 * Sockets that may still be shut down in their cork under perturbation: V8's own work inside the
 * upgrade's window (see src/ws/corked-upgrade.ts) loses about 1 in 10,000 here (without the
 * gateway's allocation over the freed memory about 150 of 600); after one, the worker (one here)
 * upgrades uncorked and loses no other.
 */
const RESIDUAL = 1;

/**
 * Every upgrade happens after an asynchronous admission, inside res.cork. uWebSockets.js 3.0.6's
 * cork() shuts such an upgrade down right after open when the HTTP state it reads from freed
 * memory says "connection: close" (see src/ws/corked-upgrade.ts). glibc's MALLOC_PERTURB_=16
 * fills freed memory with exactly those bits, so that a corked upgrade without the gateway's
 * allocation over that memory loses about 1 socket in 4 here (without perturbation, rarely): the
 * gateway runs as its own process with it set. Uncorked it would keep its sockets, but uWS would
 * print a warning on stderr for each. A socket lost all the same is never silent: the gateway logs
 * each one.
 */
describe("WebSocket upgrades after the admission lose no socket", () => {
  let child: ChildProcess;
  let wsUrl: string;
  let request: unknown;
  let stderr = "";
  /** The gateway's log lines for sockets uWS closed inside their upgrade. */
  let loggedLost = 0;
  /** The gateway said its worker upgrades uncorked from now on. */
  let uncorkedSince = false;

  before(async () => {
    // Stopped as teardown: no lame duck to wait through.
    const args = ["--port", "0", "--server.workers", "1", "--server.drain-delay", "0s"];
    child = spawn(process.execPath, [...GATEWAY_CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, MALLOC_PERTURB_: "16" },
    });
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const port = await listeningPort(child);
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      loggedLost += text.split("WebSocket closed by uWS inside its upgrade").length - 1;
      uncorkedSince ||= text.includes("this worker upgrades uncorked from now on");
    });
    wsUrl = `ws://127.0.0.1:${port}`;
    const token = tokenFor();
    const headers = { authorization: `Bearer ${token}` };
    const allocated = (await (
      await fetch(`http://127.0.0.1:${port}/v2/parties`, {
        method: "POST",
        headers,
        body: JSON.stringify({ partyIdHint: "stress" }),
      })
    ).json()) as { partyDetails: { party: string } };
    const end = (
      (await (await fetch(`http://127.0.0.1:${port}/v2/state/ledger-end`, { headers })).json()) as {
        offset: number;
      }
    ).offset;
    request = updatesRequest(wildcard([allocated.partyDetails.party]), 0, end);
  });
  after(async () => {
    child.kill("SIGTERM");
    if (child.exitCode === null) await once(child, "exit");
  });

  it("answers refused upgrades from the admission's callback corked: a plain 403, and a browser's refusal on the socket", async () => {
    const refused = await Promise.all(
      Array.from({ length: 20 }, () => upgradeAs(wsUrl, tokenFor("no-such-user"))),
    );
    assert.deepEqual(
      refused.map((answer) => answer.status),
      refused.map(() => 403),
    );
    const browser = await new Promise<string>((resolve) => {
      const socket = new WebSocket(
        `${wsUrl}/v2/updates`,
        ["daml.ws.auth", `jwt.token.${tokenFor("no-such-user")}`],
        {
          origin: "http://localhost:3000",
        },
      );
      let code = "";
      socket.on("message", (data: Buffer) => {
        code = (JSON.parse(data.toString("utf8")) as { code: string }).code;
      });
      socket.on("close", (close) => resolve(`${code} ${close}`));
      socket.on("error", () => undefined);
    });
    assert.equal(browser, "NA 4403");
    assert.doesNotMatch(stderr, /corked callback/);
  });

  it(`${UPGRADES} upgrades, half one after another and half ${CONCURRENCY} at a time, end with 1000 but for at most ${RESIDUAL}, each logged, corked`, async () => {
    const token = tokenFor();
    const codes = new Map<number, number>();
    const one = () =>
      new Promise<void>((resolve) => {
        const socket = new WebSocket(`${wsUrl}/v2/updates`, ["daml.ws.auth", `jwt.token.${token}`]);
        socket.on("open", () => socket.send(JSON.stringify(request)));
        socket.on("error", () => undefined);
        socket.on("close", (code) => {
          codes.set(code, (codes.get(code) ?? 0) + 1);
          resolve();
        });
      });
    for (let i = 0; i < UPGRADES / 2; i++) await one();
    let next = UPGRADES / 2;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next-- > 0) await one();
      }),
    );
    const lost = UPGRADES - (codes.get(1000) ?? 0);
    assert.deepEqual(
      [...codes.keys()].filter((code) => code !== 1000 && code !== 1006),
      [],
      JSON.stringify(Object.fromEntries(codes)),
    );
    assert.ok(lost <= RESIDUAL, `${lost} of ${UPGRADES} sockets lost`);
    // Each loss is logged (the line may trail the client's close by a moment).
    for (let waited = 0; loggedLost < lost && waited < 2000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(loggedLost, lost);
    // The metric agrees with the log: what alerts and the storm bench see of these losses.
    const httpUrl = wsUrl.replace(/^ws/, "http");
    assert.equal(await gatewayMetric(httpUrl, "ledger_gateway_ws_upgrades_lost_in_cork_total"), lost);
    // uWS prints this for each upgrade (or other write) made outside a cork: none unless a socket
    // was lost, after which the worker upgrades uncorked.
    if (lost === 0) assert.doesNotMatch(stderr, /corked callback/);
    else assert.ok(uncorkedSince);
  });
});
