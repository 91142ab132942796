import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { debianBinary } from "../deploy/debian-package.js";
import { call } from "../e2e/ledger-client.js";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { type Stack, startStack } from "../support/stack.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

/**
 * Issue 40: the gateway as a browser's page uses it, in Debian's Chromium (installed with apt
 * when missing, as root: CI) driven by playwright-core, which downloads no browser of its own.
 * Under root Chromium runs only with --no-sandbox (its setuid sandbox refuses root): the page is
 * ours and talks to loopback only. The page is served from another origin than the gateway's,
 * listed in server.cors.allowed-origins; a second one is not listed. The page reaches the
 * gateway through a TCP proxy that the test resets to drop the page's connections. The sandbox
 * verifies tokens (HS256) and ends a stream at its token's expiry, as Canton does.
 */
const SECRET = "browser-test-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

const executable = await debianBinary("chromium", "chromium");

/** A page server: an empty HTML page at `/`, its origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>wallet</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What the page's EventSource saw, read back from the page. */
interface PageStream {
  ticket: string;
  transactions: number[];
  lastIds: string[];
  opens: number;
  errors: number;
  jsCantonErrors: { code: string }[];
}

describe("a page of another origin in headless Chromium", {
  skip: typeof executable === "string" ? false : executable.skip,
}, () => {
  const gatewayLog = capturingLogger();
  const sandboxLog = capturingLogger();
  /** Every token minted here: none may appear in a URL or a log line. */
  const tokens: string[] = [];
  const mint = (user: string, exp: number) => {
    const token = signToken(user, { key: SECRET, audience: AUDIENCE, exp });
    tokens.push(token);
    return token;
  };
  const urls: string[] = [];
  let stack: Stack;
  let proxy: FaultProxy;
  let gateway: string;
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  let browser: Browser;
  let page: Page;
  let party: string;
  let writer: string;
  let seq = 0;

  before(async () => {
    listed = await pageServer();
    unlisted = await pageServer();
    stack = await startStack(
      ["--server.cors.allowed-origins", listed.origin],
      {},
      {
        sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE }, log: sandboxLog.log },
        gatewayLog: gatewayLog.log,
      },
    );
    proxy = await startFaultProxy({ targetPort: stack.gateway.port });
    gateway = `http://127.0.0.1:${proxy.port}`;
    const admin = mint("participant_admin", inSeconds(240));
    party = (
      await call<{ partyDetails: { party: string } }>(
        stack,
        "POST",
        "/v2/parties",
        { partyIdHint: "page" },
        admin,
      )
    ).body.partyDetails.party;
    for (const [id, right] of [
      ["page-reader", "CanReadAs"],
      ["page-writer", "CanActAs"],
    ] as const) {
      const rights = [{ kind: { [right]: { value: { party } } } }];
      const created = await call(stack, "POST", "/v2/users", { user: { id }, rights }, admin);
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    writer = mint("page-writer", inSeconds(240));
    browser = await chromium.launch({ executablePath: executable as string, args: ["--no-sandbox"] });
    page = await browser.newPage();
    page.on("request", (request) => urls.push(request.url()));
    page.on("websocket", (socket) => urls.push(socket.url()));
    await page.goto(`${listed.origin}/`);
  });

  after(async () => {
    await browser?.close();
    await proxy?.close();
    await stack?.stop();
    listed?.server.close();
    unlisted?.server.close();
  });

  /** A transaction of the party, committed; its offset. */
  const commit = async (): Promise<number> => {
    seq += 1;
    const res = await fetch(`${stack.url}/v2/commands/submit-and-wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${writer}` },
      body: JSON.stringify(tickCommands(`page-${seq}-${Date.now()}`, party, seq)),
    });
    const body = (await res.json()) as { completionOffset: number };
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.completionOffset;
  };

  const stream = () => page.evaluate(() => (globalThis as unknown as { stream: PageStream }).stream);

  it("reads each transaction with EventSource, resumes after a dropped connection, and outlives its first token by renewing it", async () => {
    const firstToken = mint("page-reader", inSeconds(12));
    const renewed = mint("page-reader", inSeconds(240));
    // What a web developer writes: a ticket with a normal authorized POST, then EventSource.
    await page.evaluate(
      async ({ gateway, token, request }) => {
        const res = await fetch(`${gateway}/v2/updates/stream-ticket`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify(request),
        });
        if (!res.ok) throw new Error(`stream-ticket ${res.status} ${await res.text()}`);
        const { ticket } = (await res.json()) as { ticket: string };
        const seen = { ticket, transactions: [], lastIds: [], opens: 0, errors: 0, jsCantonErrors: [] };
        (globalThis as unknown as { stream: PageStream }).stream = seen;
        const source = new EventSource(`${gateway}/v2/updates?ticket=${encodeURIComponent(ticket)}`);
        (globalThis as unknown as { source: EventSource }).source = source;
        source.onopen = () => {
          seen.opens += 1;
        };
        source.onerror = () => {
          seen.errors += 1;
        };
        source.onmessage = (event) => {
          const element = JSON.parse(event.data) as {
            update?: { Transaction?: { value: { offset: number } } };
          };
          (seen.lastIds as string[]).push(event.lastEventId);
          const transaction = element.update?.Transaction;
          if (transaction) (seen.transactions as number[]).push(transaction.value.offset);
        };
        source.addEventListener("JsCantonError", (event) => {
          (seen.jsCantonErrors as unknown[]).push(JSON.parse((event as MessageEvent).data));
        });
      },
      { gateway, token: firstToken, request: updatesRequest(partyFilter(party)) },
    );
    const created = [await commit()];
    const observed = async () => JSON.stringify(await stream());
    await until(async () => (await stream()).transactions.length === 1, { observed });

    // Renewed with a normal authorized POST, answered with the new expiry.
    const renewal = await page.evaluate(
      async ({ gateway, token, ticket }) => {
        const res = await fetch(`${gateway}/v2/stream-tickets/renewal`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ ticket }),
        });
        return { status: res.status, body: await res.json() };
      },
      { gateway, token: renewed, ticket: (await stream()).ticket },
    );
    assert.equal(renewal.status, 200, JSON.stringify(renewal.body));
    assert.deepEqual(renewal.body, {
      tokenRenewed: { expiresAt: new Date(decodeExp(renewed) * 1000).toISOString() },
    });

    // The connection dropped: EventSource reconnects with Last-Event-ID and misses nothing.
    proxy.reset();
    created.push(await commit());
    await until(async () => (await stream()).opens >= 2 && (await stream()).transactions.length === 2, {
      observed,
    });

    // Past the first token's expiry the stream goes on, on the renewed one.
    await until(() => Date.now() / 1000 > decodeExp(firstToken) + 1, { budgetMs: 20_000 });
    created.push(await commit());
    await until(async () => (await stream()).transactions.length === 3, { observed });
    const seen = await stream();
    assert.deepEqual(seen.transactions, created, await observed());
    assert.deepEqual(seen.jsCantonErrors, [], await observed());
    assert.ok(seen.errors >= 1, "the drop was seen by the page");
    assert.ok(
      seen.lastIds.every((id) => /^[\w-]+\.\d+$/.test(id)),
      await observed(),
    );
    await page.evaluate(() => (globalThis as unknown as { source: EventSource }).source.close());
  });

  it("sends traceparent across origins and reads the Canton-Package-Hash answer header", async () => {
    const token = mint("page-reader", inSeconds(240));
    const admin = mint("participant_admin", inSeconds(240));
    const packages = await call<{ packageIds: string[] }>(stack, "GET", "/v2/packages", undefined, admin);
    const packageId = packages.body.packageIds[0] as string;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const read = await page.evaluate(
      async ({ gateway, token, packageId, traceId }) => {
        const traced = await fetch(`${gateway}/v2/users/no-such-user`, {
          headers: { Authorization: `Bearer ${token}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        });
        const download = await fetch(`${gateway}/v2/packages/${packageId}`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        await download.arrayBuffer();
        return {
          tracedStatus: traced.status,
          traced: (await traced.json()) as { traceId: string },
          hash: download.headers.get("Canton-Package-Hash"),
        };
      },
      { gateway, token, packageId, traceId },
    );
    // The error names the page's trace: the header went through the preflight and on to the gateway.
    assert.equal(read.traced.traceId, traceId, JSON.stringify(read));
    const direct = await fetch(`${stack.url}/v2/packages/${packageId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await direct.arrayBuffer();
    assert.equal(read.hash, direct.headers.get("Canton-Package-Hash"));
    assert.match(read.hash ?? "", /^[0-9a-f]{64}$/);
  });

  it("tells an expired token from a forbidden origin on a refused WebSocket, and is told of an accepted renewal", async () => {
    const wsUrl = `${gateway.replace(/^http/, "ws")}/v2/updates`;
    const open = (where: Page, token: string) =>
      where.evaluate(
        ({ wsUrl, token }) =>
          new Promise<{ code: number; reason: string; frame: unknown }>((resolve) => {
            const socket = new WebSocket(wsUrl, ["daml.ws.auth", `jwt.token.${token}`]);
            let frame: unknown;
            socket.onmessage = (event) => {
              const { code, grpcCodeValue } = JSON.parse(event.data as string) as Record<string, unknown>;
              frame = { code, grpcCodeValue };
            };
            socket.onclose = (event) => resolve({ code: event.code, reason: event.reason, frame });
          }),
        { wsUrl, token },
      );
    const expired = await open(page, mint("page-reader", inSeconds(-60)));
    // The ledger's refusal, redacted as Canton redacts it (code NA, gRPC UNAUTHENTICATED): the
    // close is what tells the page to renew its token.
    assert.deepEqual(expired, {
      code: 4401,
      reason: "token expired",
      frame: { code: "NA", grpcCodeValue: 16 },
    });

    const other = await browser.newPage();
    other.on("websocket", (socket) => urls.push(socket.url()));
    await other.goto(`${unlisted.origin}/`);
    const forbidden = await open(other, mint("page-reader", inSeconds(240)));
    assert.deepEqual(forbidden, {
      code: 4403,
      reason: "forbidden origin",
      frame: { code: "CORS_ORIGIN_NOT_ALLOWED", grpcCodeValue: 3 },
    });
    await other.close();

    const renewed = mint("page-reader", inSeconds(200));
    const acknowledged = await page.evaluate(
      ({ wsUrl, token, renewed, request }) =>
        new Promise<unknown>((resolve, reject) => {
          const socket = new WebSocket(wsUrl, ["daml.ws.auth", `jwt.token.${token}`]);
          socket.onopen = () => socket.send(JSON.stringify(request));
          let renewing = false;
          socket.onmessage = (event) => {
            const frame = JSON.parse(event.data as string) as { tokenRenewed?: unknown; code?: string };
            if (frame.code !== undefined) reject(new Error(event.data as string));
            // Renewed once the stream stands at an offset the ledger can be asked about.
            if (!renewing) socket.send(JSON.stringify({ token: renewed, acknowledge: true }));
            renewing = true;
            if (frame.tokenRenewed === undefined) return;
            socket.close(1000);
            resolve(frame);
          };
          socket.onclose = (event) => reject(new Error(`closed ${event.code} ${event.reason}`));
        }),
      {
        wsUrl,
        token: mint("page-reader", inSeconds(240)),
        renewed,
        request: updatesRequest(partyFilter(party)),
      },
    );
    assert.deepEqual(acknowledged, {
      tokenRenewed: { expiresAt: new Date(decodeExp(renewed) * 1000).toISOString() },
    });
  });

  it("puts no bearer token in any URL the browser asked for, nor in a log line", () => {
    assert.ok(
      urls.some((url) => url.includes("?ticket=")),
      urls.join("\n"),
    );
    const logs = [...gatewayLog.entries(), ...sandboxLog.entries()].map((entry) => JSON.stringify(entry));
    assert.ok(logs.length > 0);
    for (const token of tokens) {
      // Its signature is the part no other token shares.
      const secret = token.split(".")[2] as string;
      for (const url of urls) assert.ok(!url.includes(secret), `a token in ${url}`);
      for (const line of logs) assert.ok(!line.includes(secret), `a token in the log line ${line}`);
    }
  });
});

function decodeExp(token: string): number {
  const payload = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8")) as {
    exp: number;
  };
  return payload.exp;
}
