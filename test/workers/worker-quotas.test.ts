import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { adminPost } from "../support/admin-post.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const SOCKETS = 12;

/** The CLI with its embedded sandbox; resolves with its port once its workers listen. */
function startCli(args: string[]): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli.ts", "--port", "0", "--server.drain-delay", "0s", ...args],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === "gateway listening") resolve(entry.port as number);
    });
    child.once("exit", () => reject(new Error("the gateway exited before listening")));
  });
  return { child, port };
}

describe("caps with server.workers 2", () => {
  it("holds limits.ws-connections-per-user across both workers together, and gives a slot back at a close", async () => {
    const gateway = startCli(["--server.workers", "2", "--limits.ws-connections-per-user", "2"]);
    try {
      const base = `http://127.0.0.1:${await gateway.port}`;
      const { partyDetails } = (await adminPost(base, "/v2/parties", { partyIdHint: "workers_quota" })) as {
        partyDetails: { party: string };
      };
      const party = partyDetails.party;
      await adminPost(base, "/v2/users", {
        user: { id: "olivia", primaryParty: "" },
        rights: [{ kind: { CanReadAs: { value: { party } } } }],
      });
      const token = tokenFor("olivia");
      const metric = (name: string, ...labels: string[]) => gatewayMetric(base, name, ...labels);

      // Each socket a connection of its own: the kernel spreads them over the workers (SO_REUSEPORT);
      // with counters per worker, up to 4 would be let in.
      let refusedCloses = 0;
      const open = (): WebSocket => {
        const socket = new WebSocket(`${base.replace(/^http/, "ws")}/v2/updates`, [
          "daml.ws.auth",
          `jwt.token.${token}`,
        ]);
        socket.on("open", () => socket.send(JSON.stringify(updatesRequest(partyFilter(party)))));
        socket.on("error", () => undefined);
        socket.on("close", (code) => {
          if (code === 1013) refusedCloses++;
        });
        return socket;
      };
      const sockets = Array.from({ length: SOCKETS }, open);
      const streamsOpen = () => metric("ledger_gateway_ws_streams_open", 'endpoint="/v2/updates"');
      await until(async () => refusedCloses + (await streamsOpen()) === SOCKETS, {
        observed: async () => `${refusedCloses} refused, ${await streamsOpen()} open`,
      });
      assert.equal(await streamsOpen(), 2);
      assert.equal(refusedCloses, SOCKETS - 2);
      assert.equal(
        await metric(
          "ledger_gateway_limit_refusals_total",
          'cap="ws-connections-per-user"',
          'reason="limit"',
        ),
        SOCKETS - 2,
      );

      const accepted = sockets.filter((s) => s.readyState === WebSocket.OPEN);
      assert.equal(accepted.length, 2);
      accepted[0]?.close(1000);
      await until(async () => (await streamsOpen()) === 1);
      open();
      await until(async () => (await streamsOpen()) === 2);
      assert.equal(refusedCloses, SOCKETS - 2);
      for (const socket of sockets) socket.terminate();
    } finally {
      gateway.child.kill("SIGTERM");
      await once(gateway.child, "exit");
    }
  });
});
