import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { get } from "node:http";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { freePort } from "../../bench/lib/free-port.js";
import { heldUnlessLostInCork } from "../support/lost-in-cork.js";
import { tokenFor } from "../support/tokens.js";

const CLI = ["--import", "tsx", "src/cli.ts"];

interface LogEntry {
  msg?: string;
  port?: number;
  worker?: number | string;
  workers?: number;
}

/** The CLI as operators start it; `lines` collects its JSON log entries. */
function startCli(args: string[]): { child: ChildProcess; lines: LogEntry[]; listening: Promise<LogEntry> } {
  // No lame duck before the drain under test (test/cli/graceful-shutdown.test.ts has it).
  const child = spawn(process.execPath, [...CLI, "--server.drain-delay", "0s", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogEntry[] = [];
  const listening = new Promise<LogEntry>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const entry = JSON.parse(line) as LogEntry;
      lines.push(entry);
      if (entry.msg === "gateway listening") resolve(entry);
    });
    child.once("exit", () => reject(new Error("the gateway exited before listening")));
  });
  return { child, lines, listening };
}

/** GET on a connection of its own (no keep-alive), so that the kernel picks a worker for each. */
function getOnNewConnection(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    }).on("error", reject);
  });
}

const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no series ${series}`);
  return Number(line.slice(series.length + 1));
};

async function stopCli(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  child.kill("SIGTERM");
  const [code] = await once(child, "exit");
  return code as number | null;
}

describe("server.workers", () => {
  it("spreads requests over 2 worker threads and /metrics sums them, process metrics once", async () => {
    const gateway = startCli(["--port", "0", "--server.workers", "2"]);
    try {
      const listening = await gateway.listening;
      assert.equal(listening.workers, 2);
      assert.equal(listening.worker, "main");
      const port = listening.port as number;
      // Every worker says it listens on the one port, with its id in the line.
      const workerLines = gateway.lines.filter((e) => e.msg === "worker listening");
      assert.deepEqual(workerLines.map((e) => e.worker).sort(), [1, 2]);
      assert.deepEqual(
        workerLines.map((e) => e.port),
        [port, port],
      );

      let made = 0;
      let perWorker = [0, 0];
      // SO_REUSEPORT hashes each new connection to a worker: loop until both have served some.
      while (perWorker.some((n) => n === 0)) {
        assert.ok(made < 400, `after ${made} connections a worker still served none: ${perWorker}`);
        for (let i = 0; i < 10; i++) {
          assert.equal((await getOnNewConnection(port, "/livez")).status, 200);
          made++;
        }
        const { body } = await getOnNewConnection(port, "/metrics");
        // The scrapes count as requests too (route /metrics); /livez is what the test made.
        const scrapes = sample(
          body,
          'ledger_gateway_http_requests_total{route="/metrics",method="GET",status_class="2xx"}',
        );
        perWorker = [1, 2].map((w) =>
          sample(body, `ledger_gateway_worker_http_requests_total{worker="${w}"}`),
        );
        assert.equal(perWorker[0]! + perWorker[1]!, made + scrapes);
      }
      const { body } = await getOnNewConnection(port, "/metrics");
      assert.equal(
        sample(body, 'ledger_gateway_http_requests_total{route="/livez",method="GET",status_class="2xx"}'),
        made,
      );
      assert.equal(
        sample(body, 'ledger_gateway_http_request_duration_seconds_count{route="/livez",method="GET"}'),
        made,
      );
      // Both workers serve one Canton release (they share it): one series, at 1, not their sum.
      assert.deepEqual(
        body.split("\n").filter((l) => l.startsWith("ledger_gateway_ledger_api_version_info{")),
        ['ledger_gateway_ledger_api_version_info{served="3.5.10",reported="3.5.10"} 1'],
      );
      // The process's metrics once, not once per worker.
      assert.equal(body.split("\n").filter((l) => l.startsWith("process_resident_memory_bytes ")).length, 1);
      assert.equal(
        body.split("\n").filter((l) => l.startsWith("# TYPE process_cpu_seconds_total ")).length,
        1,
      );

      assert.equal(await stopCli(gateway.child), 0);
      assert.ok(gateway.lines.some((e) => e.msg === "stopped" && e.worker === "main"));
    } finally {
      gateway.child.kill("SIGKILL");
    }
  });

  it("keeps a second gateway process off the port its workers share", async () => {
    const port = await freePort();
    const first = startCli(["--port", String(port), "--server.workers", "2"]);
    try {
      await first.listening;
      const second = spawn(process.execPath, [...CLI, "--port", String(port), "--server.workers", "2"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      second.stdout?.on("data", (d) => {
        stdout += d;
      });
      second.stderr?.on("data", (d) => {
        stderr += d;
      });
      const [code] = await once(second, "exit");
      assert.equal(code, 1);
      assert.equal(
        stderr,
        `ledger-json-gateway: cannot listen on 127.0.0.1:${port}: address already in use (another gateway or another process listens there)\n`,
      );
      assert.equal(stdout, "");
      // The first one still answers every connection: none went to the second process.
      for (let i = 0; i < 20; i++) assert.equal((await getOnNewConnection(port, "/livez")).status, 200);
      assert.equal(await stopCli(first.child), 0);
    } finally {
      first.child.kill("SIGKILL");
    }
  });

  it("with server.workers 1 runs on the main thread alone, its log lines without a worker field", async () => {
    const gateway = startCli(["--port", "0", "--server.workers", "1"]);
    try {
      const listening = await gateway.listening;
      assert.equal(listening.worker, undefined);
      assert.equal(listening.workers, undefined);
      assert.equal((await getOnNewConnection(listening.port as number, "/livez")).status, 200);
      const { body } = await getOnNewConnection(listening.port as number, "/metrics");
      assert.equal(body.includes("ledger_gateway_worker_http_requests_total"), false);
      assert.equal(await stopCli(gateway.child), 0);
      assert.equal(gateway.lines.filter((e) => e.msg === "worker listening").length, 0);
      assert.ok(gateway.lines.every((e) => !("worker" in e)));
    } finally {
      gateway.child.kill("SIGKILL");
    }
  });

  it("drains every worker on SIGTERM: WebSockets on all of them close with 1001, exit 0", async () => {
    const gateway = startCli(["--port", "0", "--server.workers", "2"]);
    try {
      const port = (await gateway.listening).port as number;
      const closes: Promise<number>[] = [];
      // Upgraded sockets that sent no request yet: 16 connections, which the kernel's hash puts
      // all on one worker once in 32 768 runs; every one must be closed by its own worker.
      for (let i = 0; i < 16; i++) {
        const socket = await heldUnlessLostInCork(`http://127.0.0.1:${port}`, async () => {
          const socket = new WebSocket(`ws://127.0.0.1:${port}/v2/updates`, [
            "daml.ws.auth",
            `jwt.token.${tokenFor()}`,
          ]);
          await once(socket, "open");
          return socket;
        });
        closes.push(once(socket, "close").then(([code]) => code as number));
      }
      assert.equal(await stopCli(gateway.child), 0);
      assert.deepEqual(await Promise.all(closes), new Array(16).fill(1001));
      assert.ok(gateway.lines.some((e) => e.msg === "stopped" && e.worker === "main"));
    } finally {
      gateway.child.kill("SIGKILL");
    }
  });
});
