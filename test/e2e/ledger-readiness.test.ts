import { ok } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";
import { tokenFor } from "../support/tokens.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` is true; how long that took, or undefined past `withinMs`. */
async function pollUntil(check: () => Promise<boolean>, withinMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (await check()) return Date.now() - started;
    await sleep(100);
  }
  return undefined;
}

describe("gateway readiness and reconnection follow the ledger (standalone sandbox process)", () => {
  let sandbox: SandboxProcess;
  let gateway: RunningGateway;
  let url: string;
  const token = tokenFor();
  const readyz = async () => (await fetch(`${url}/readyz`)).status;
  const readyMetric = async () =>
    /^ledger_gateway_ledger_ready (\d)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1];
  const version = async () =>
    (await fetch(`${url}/v2/version`, { headers: { authorization: `Bearer ${token}` } })).status;

  before(async () => {
    sandbox = await startSandboxProcess();
    const config = loadConfig({ argv: ["--port", "0", "--server.workers", "1"], env: {} });
    gateway = await startGateway(
      config,
      { host: "127.0.0.1", port: sandbox.port },
      pino({ level: "silent" }),
    );
    url = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway.stop(1_000);
    await sandbox.kill();
  });

  it("answers /readyz 503 while the ledger is frozen (SIGSTOP) and 200 again after SIGCONT", async () => {
    ok((await pollUntil(async () => (await readyz()) === 200, 20_000)) !== undefined, "ready at first");
    ok(
      (await pollUntil(async () => (await readyMetric()) === "1", 15_000)) !== undefined,
      "ledger_gateway_ledger_ready 1",
    );
    sandbox.child.kill("SIGSTOP");
    try {
      // The connection stays open while the process is stopped: only a live round trip notices.
      const frozen = await pollUntil(async () => (await readyz()) === 503, 15_000);
      ok(frozen !== undefined, "/readyz must say 503 while the ledger answers nothing");
      // A scrape reuses the last probe's answer for up to 5 s.
      const unready = await pollUntil(async () => (await readyMetric()) === "0", 15_000);
      ok(unready !== undefined, "and ledger_gateway_ledger_ready 0");
    } finally {
      sandbox.child.kill("SIGCONT");
    }
    ok((await pollUntil(async () => (await readyz()) === 200, 20_000)) !== undefined, "ready after SIGCONT");
    ok(
      (await pollUntil(async () => (await readyMetric()) === "1", 15_000)) !== undefined,
      "ledger_gateway_ledger_ready 1 again",
    );
  });

  it("serves again within seconds of a ledger restarted on the same port", async () => {
    ok((await pollUntil(async () => (await version()) === 200, 20_000)) !== undefined, "serving at first");
    const { port } = sandbox;
    await sandbox.kill();
    // Down for a while, with clients calling: the old backoff (1 s, x1.6 each attempt) grew
    // to several seconds between attempts by the time the ledger came back.
    const down = Date.now();
    while (Date.now() - down < 5_000) {
      ok((await version()) !== 200, "no answer while the ledger is down");
      await sleep(200);
    }
    sandbox = await startSandboxProcess({ port });
    // The reconnection backoff is at most 1 s; 10 s is only there to end a broken run on a loaded machine.
    const reconnectedIn = await pollUntil(async () => (await version()) === 200, 10_000);
    ok(
      reconnectedIn !== undefined,
      `the gateway must reach the restarted ledger within 10 s of its return; last answer ${await version()}`,
    );
    ok((await readyz()) === 200);
  });
});
