import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { permissiveAuthorizer } from "../../src/sandbox/auth/authorization.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { RawConnection } from "../http/raw-http.js";
import { GATEWAY_CLI } from "../support/gateway-cli.js";
import { tokenFor } from "../support/tokens.js";
import { waitFor } from "../support/transport-harness.js";

/**
 * A slow ledger on demand: while `holding`, every call the sandbox authorizes waits until
 * `release()`; `held` counts the calls waiting. The rights themselves are not checked.
 */
class LedgerGate {
  holding = false;
  private waiting: (() => void)[] = [];
  readonly authorizer = {
    require: async () => {
      if (!this.holding) return;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    },
  };
  get held(): number {
    return this.waiting.length;
  }
  release(): void {
    this.holding = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** The gateway's JSON log lines on stdout. */
/** The gateway CLI in front of the ledger at `ledgerPort`; `drainDelay` absent: the default lame duck. */
function spawnGateway(ledgerPort: number, workers: number, drainDelay?: string): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...GATEWAY_CLI,
      ...["--port", "0", "--ledger", `127.0.0.1:${ledgerPort}`, "--server.workers", String(workers)],
      ...(drainDelay === undefined ? [] : ["--server.drain-delay", drainDelay]),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
}

function logLines(child: ChildProcess): { msgs: string[]; port: Promise<number> } {
  const msgs: string[] = [];
  const port = new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as { msg: string; port?: number };
      msgs.push(entry.msg);
      if (entry.msg === "gateway listening" && typeof entry.port === "number") resolve(entry.port);
    });
    child.once("exit", () => reject(new Error("the gateway exited before listening")));
  });
  return { msgs, port };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const LAME_DUCK = "lame duck: /readyz answers 503, requests are still served";

/** One GET on a connection of its own (with several workers, the kernel picks one per connection). */
async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers: { ...headers, connection: "close" } });
  await response.arrayBuffer();
  return response.status;
}

describe("graceful shutdown on SIGTERM with a slow ledger", () => {
  const gate = new LedgerGate();
  let sandbox: RunningSandbox;
  before(async () => {
    sandbox = await startSandbox({ port: 0, authorizer: { ...permissiveAuthorizer(), ...gate.authorizer } });
  });
  after(() => sandbox.stop());

  for (const workers of [1, 2]) {
    it(`answers a submit-and-wait in flight and refuses new requests before exiting (server.workers ${workers})`, async () => {
      const child = spawnGateway(sandbox.port, workers, "0s");
      try {
        const log = logLines(child);
        const port = await log.port;
        const base = `http://127.0.0.1:${port}`;
        const headers = { authorization: `Bearer ${tokenFor()}` };
        const party = await fetch(`${base}/v2/parties`, {
          method: "POST",
          headers,
          body: JSON.stringify({ partyIdHint: `shutdown-${workers}` }),
        });
        const issuer = ((await party.json()) as { partyDetails: { party: string } }).partyDetails.party;
        // A keep-alive connection opened before the shutdown: its next request must be refused.
        const kept = await RawConnection.open(port);
        kept.write(`GET /livez HTTP/1.1\r\nHost: x\r\n\r\n`);
        await kept.untilResponses(1);

        gate.holding = true;
        const submitted = fetch(`${base}/v2/commands/submit-and-wait`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            commandId: `during-shutdown-${workers}`,
            actAs: [issuer],
            commands: [
              {
                CreateCommand: {
                  templateId: "#gateway-samples:Iou:Iou",
                  createArguments: { issuer, owner: issuer, currency: "EUR", amount: "1", observers: [] },
                },
              },
            ],
          }),
        });
        submitted.catch(() => undefined);
        await waitFor("the command's calls to reach the ledger", () => gate.held > 0);
        child.kill("SIGTERM");
        await waitFor(
          "every worker to drain",
          () => log.msgs.filter((msg) => msg === "draining: new requests refused").length === workers,
        );
        assert.equal(log.msgs.includes(LAME_DUCK), false, "server.drain-delay 0s: no lame duck");

        // Refused on a connection of a gateway still draining; a worker with nothing in flight may
        // have closed its connections already, which refuses it too. Never served.
        kept.write(`GET /livez HTTP/1.1\r\nHost: x\r\n\r\n`);
        await kept.until("an answer or a close", () => kept.responses().length === 2 || kept.closed);
        const refused = kept.responses()[1];
        if (workers === 1 || refused !== undefined) {
          assert.equal(refused?.status, 503);
          assert.equal(JSON.parse(refused?.body ?? "{}").code, "SERVICE_NOT_RUNNING");
        }
        await kept.untilClosed();

        // Longer than the 5 s the gateway used to wait before it closed every connection.
        await sleep(6_000);
        gate.release();
        const answer = await submitted.catch((error: Error & { cause?: { code?: string } }) => {
          throw new Error(`the command's answer was lost: ${error.cause?.code ?? error.message}`);
        });
        assert.equal(answer.status, 200);
        assert.match(((await answer.json()) as { updateId: string }).updateId, /^[0-9a-f]+$/);
        const [code] = await once(child, "exit");
        assert.equal(code, 0);
      } finally {
        gate.release();
        child.kill("SIGKILL");
      }
    });
  }

  it("ends at once, exit code 1, on a second signal during the drain", async () => {
    const child = spawnGateway(sandbox.port, 1, "0s");
    try {
      const log = logLines(child);
      const port = await log.port;
      gate.holding = true;
      // A call held at the ledger keeps the gateway draining.
      const held = fetch(`http://127.0.0.1:${port}/v2/parties`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokenFor()}` },
        body: JSON.stringify({ partyIdHint: "second-signal" }),
      });
      held.catch(() => undefined);
      await waitFor("the call to reach the ledger", () => gate.held > 0);
      child.kill("SIGTERM");
      await waitFor("the drain", () => log.msgs.includes("draining: new requests refused"));
      child.kill("SIGINT");
      const [code] = await once(child, "exit");
      assert.equal(code, 1);
      assert.ok(gate.held > 0, "it did not wait for the held call");
    } finally {
      gate.release();
      child.kill("SIGKILL");
    }
  });
  for (const workers of [1, 2]) {
    it(`answers /readyz 503 for server.drain-delay after SIGTERM while serving requests, then exits (server.workers ${workers})`, async () => {
      // Long enough for the requests below on a loaded machine; the test waits for the log line.
      const child = spawnGateway(sandbox.port, workers, "8s");
      try {
        const log = logLines(child);
        const base = `http://127.0.0.1:${await log.port}`;
        const headers = { authorization: `Bearer ${tokenFor()}` };
        assert.equal(await statusOf(`${base}/readyz`), 200, "ready before the signal");

        child.kill("SIGTERM");
        await waitFor("the lame duck", () => log.msgs.includes(LAME_DUCK));
        // Each on a connection of its own, so that both workers answer.
        const readyz: number[] = [];
        const version: number[] = [];
        for (let i = 0; i < 8; i++) {
          readyz.push(await statusOf(`${base}/readyz`));
          version.push(await statusOf(`${base}/v2/version`, headers));
        }
        assert.equal(log.msgs.includes("draining: new requests refused"), false, "still in the lame duck");
        assert.deepEqual(readyz, new Array(8).fill(503));
        assert.deepEqual(version, new Array(8).fill(200));

        const [code] = await once(child, "exit");
        assert.equal(code, 0);
        // Then the shutdown as before: the lame duck came first.
        const at = (msg: string) => log.msgs.indexOf(msg);
        assert.ok(at(LAME_DUCK) < at("shutting down"), log.msgs.join(" | "));
        assert.ok(at("shutting down") < at("draining: new requests refused"), log.msgs.join(" | "));
        assert.ok(at("draining: new requests refused") < at("stopped"), log.msgs.join(" | "));
      } finally {
        child.kill("SIGKILL");
      }
    });
  }

  it("skips the lame duck on SIGINT (an operator's Ctrl-C)", async () => {
    const child = spawnGateway(sandbox.port, 1);
    try {
      const log = logLines(child);
      await log.port;
      child.kill("SIGINT");
      const [code] = await once(child, "exit");
      assert.equal(code, 0);
      assert.equal(log.msgs.includes(LAME_DUCK), false);
      assert.ok(log.msgs.includes("draining: new requests refused"));
    } finally {
      child.kill("SIGKILL");
    }
  });
});
