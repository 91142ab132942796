import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, it } from "node:test";
import WebSocket from "ws";
import type { RunningGateway } from "../../src/gateway.js";
import { gatewayOnSandbox } from "../support/gateway-on-sandbox.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const TICKS = 5;

type Json = Record<string, unknown>;

interface Client {
  /** Offsets of the elements received, transactions and checkpoints alike. */
  offsets: number[];
  /** Frames that are not elements (errors). */
  errors: Json[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `n` elements arrived. */
  elements(n: number): Promise<void>;
}

/** An open-ended /v2/updates stream of the preloaded party, from the start. */
function subscribe(gateway: RunningGateway, party: string): Client {
  const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${tokenFor(`actAs-${party}`)}`,
  ]);
  const offsets: number[] = [];
  const errors: Json[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  socket.on("open", () => socket.send(JSON.stringify(updatesRequest(partyFilter(party)))));
  socket.on("message", (data: Buffer) => {
    const frame = JSON.parse(data.toString("utf8")) as {
      update?: Record<string, { value: { offset: number } }>;
    };
    if (frame.update === undefined) {
      errors.push(frame as Json);
      return;
    }
    offsets.push(Object.values(frame.update)[0]?.value.offset as number);
    for (const w of waiters.filter((w) => offsets.length >= w.n)) w.resolve();
  });
  socket.on("error", () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    offsets,
    errors,
    closed,
    elements: (n) =>
      offsets.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
  };
}

/**
 * Issue 14 items 4 and 5, WebSocket part: a stream that ends because the ledger went away, or
 * because the gateway shuts down, tells the client where to resume.
 */
describe("WebSocket streams when the ledger or the gateway goes away", () => {
  let sandbox: SandboxProcess | undefined;
  let gateway: RunningGateway | undefined;

  /** The standalone sandbox in its own process, so that it can be killed as a ledger dies. */
  const start = async (resumeWindow = "2s", args: string[] = []) => {
    sandbox = await startSandboxProcess({ args: ["--preload", `ticks=${TICKS},party=lost`] });
    // A ledger that stays away is retried for the resume window first (ws-ledger-resume.test.ts).
    const started = await gatewayOnSandbox(sandbox, "lost", {
      args: ["--websocket-config.resume-window", resumeWindow, ...args],
    });
    gateway = started.gateway;
    return { sandbox, ...started };
  };
  // A test may have stopped either already.
  afterEach(async () => {
    await gateway?.stop(1_000).catch(() => undefined);
    await sandbox?.kill();
    gateway = undefined;
    sandbox = undefined;
  });

  it("ends each stream of a ledger lost for longer than the resume window with an UNAVAILABLE frame naming the last offset delivered, then close 1013", async () => {
    const { sandbox, gateway, party } = await start();
    const clients = [subscribe(gateway, party), subscribe(gateway, party)];
    await Promise.all(clients.map((c) => c.elements(TICKS)));
    // The ledger dies with the streams open.
    await sandbox.kill();
    for (const client of clients) {
      const { code, reason } = await client.closed;
      const last = client.offsets.at(-1);
      assert.equal(client.errors.length, 1, JSON.stringify(client.errors));
      const error = client.errors[0] as { grpcCodeValue: number; context: Record<string, string> };
      assert.equal(error.grpcCodeValue, 14);
      assert.equal(error.context.resume_after_offset, String(last));
      assert.equal(code, 1013);
      assert.equal(reason, `ledger unavailable; resume after offset ${last}`);
    }
  });

  it("ends a stream with the UNAVAILABLE frame and close 1013 when the ledger comes back without its offset (it lost its state)", async () => {
    // A window the restart certainly fits in: the stream ends because the offset is gone. No
    // re-check meanwhile: the empty ledger has not allocated the token's party, so a re-check
    // that reached it before the resume found the offset gone would end the stream, rightly, with
    // STALE_STREAM_AUTHORIZATION (CI saw that once, the default re-check being every 5 s).
    const { gateway, party } = await start("60s", [
      "--websocket-config.stream-authorization-recheck-interval",
      "600s",
    ]);
    const client = subscribe(gateway, party);
    await client.elements(TICKS);
    const { port } = sandbox as SandboxProcess;
    await sandbox?.kill();
    // Back within the resume window on the same port, empty: the stream's offset is past its end.
    sandbox = await startSandboxProcess({ port });
    const { code, reason } = await client.closed;
    const last = client.offsets.at(-1);
    assert.equal(client.errors.length, 1, JSON.stringify(client.errors));
    const error = client.errors[0] as { grpcCodeValue: number; context: Record<string, string> };
    assert.equal(error.grpcCodeValue, 14, JSON.stringify(error));
    assert.equal(error.context.resume_after_offset, String(last));
    assert.equal(code, 1013);
    assert.equal(reason, `ledger unavailable; resume after offset ${last}`);
  });

  it("ends each stream at a graceful shutdown with SERVICE_NOT_RUNNING naming the last offset delivered, then close 1001", async () => {
    const { gateway, party } = await start();
    const client = subscribe(gateway, party);
    await client.elements(TICKS);
    await gateway.stop(1_000);
    const { code, reason } = await client.closed;
    const last = client.offsets.at(-1);
    assert.equal(client.errors.length, 1, JSON.stringify(client.errors));
    const error = client.errors[0] as { code: string; context: Record<string, string> };
    assert.equal(error.code, "SERVICE_NOT_RUNNING");
    assert.equal(error.context.resume_after_offset, String(last));
    assert.equal(code, 1001);
    assert.equal(reason, `gateway shutting down; resume after offset ${last}`);
  });

  it("stops once however often stop() is called, streams open (a second close of uWS's sockets crashed it)", async () => {
    // Its own process, with freed memory filled (MALLOC_PERTURB_): a use-after-free crashes it.
    const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/stop-twice.ts"], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, MALLOC_PERTURB_: "16" },
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    assert.equal(signal, null, output);
    assert.equal(code, 0, output);
    assert.equal(output.match(/stopped three times, streams closed 1001, 1001/g)?.length, 10, output);
  });
});
