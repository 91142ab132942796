import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { adminPost } from "../support/admin-post.js";
import { GATEWAY_CLI, listeningPort } from "../support/gateway-cli.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

/**
 * Parties (sockets) at most: the kernel spreads connections over the workers by a hash, so with
 * 10 one worker got at most 1 in some 2 % of runs (1 and 9 once, under the full suite's load);
 * with 20, some 4 in 100,000.
 */
const PARTIES = 20;

describe("limits.ledger-streams with server.workers 2", () => {
  it("holds one budget for both workers together: 2 ledger calls open, the other subscriptions wait and get the slots freed on either worker", async () => {
    const child = spawn(
      process.execPath,
      [
        ...GATEWAY_CLI,
        "--port",
        "0",
        "--server.drain-delay",
        "0s",
        "--server.workers",
        "2",
        // 2 of the 3 for subscriptions, 1 kept for authorization calls.
        "--limits.ledger-streams",
        "3",
        "--limits.ledger-streams-queue-timeout",
        "10m",
        // One reader opens every stream: a share per user it does not reach (the budget is tested).
        "--limits.ledger-streams-per-user",
        "100",
        // No re-check probes: they would be streams on the ledger beside the ones counted.
        "--websocket-config.stream-authorization-recheck-interval",
        "0s",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const sockets: WebSocket[] = [];
    try {
      const base = `http://127.0.0.1:${await listeningPort(child)}`;
      const parties: string[] = [];
      for (let i = 0; i < PARTIES; i++) {
        const { partyDetails } = (await adminPost(base, "/v2/parties", {
          partyIdHint: `workers_budget_${i}`,
        })) as {
          partyDetails: { party: string };
        };
        parties.push(partyDetails.party);
      }
      await adminPost(base, "/v2/users", {
        user: { id: "budget-reader", primaryParty: "" },
        rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
      });
      const token = tokenFor("budget-reader");
      assert.equal(await gatewayMetric(base, "ledger_gateway_ledger_streams_budget"), 3);

      const open = () => gatewayMetric(base, "ledger_gateway_ledger_streams_open");
      const queued = () => gatewayMetric(base, "ledger_gateway_ledger_streams_queued");
      const onWorker = (worker: number) =>
        gatewayMetric(base, "ledger_gateway_worker_ws_streams_open", `worker="${worker}"`);
      const state = async () =>
        `${await open()} open, ${await queued()} queued, workers ${await onWorker(1)}/${await onWorker(2)}`;

      // One party each: no fan-out between them, one ledger call each. Each socket is a
      // connection of its own, spread over the workers by the kernel (SO_REUSEPORT); opened
      // until each worker serves at least 2, so that budgets per worker would open 4 calls.
      for (const party of parties) {
        const socket = new WebSocket(`${base.replace(/^http/, "ws")}/v2/updates`, [
          "daml.ws.auth",
          `jwt.token.${token}`,
        ]);
        socket.on("open", () => socket.send(JSON.stringify(updatesRequest(partyFilter(party)))));
        socket.on("error", () => undefined);
        sockets.push(socket);
        const total = sockets.length;
        await until(async () => (await open()) + (await queued()) === total, { observed: state });
        if ((await onWorker(1)) >= 2 && (await onWorker(2)) >= 2) break;
      }
      assert.ok((await onWorker(1)) >= 2 && (await onWorker(2)) >= 2, await state());
      assert.equal(await open(), 2, await state());
      assert.equal(await queued(), sockets.length - 2);

      // Closed in order: every slot freed, on whichever worker, goes to a waiter of either.
      for (let left = sockets.length - 1; left >= 0; left--) {
        const socket = sockets[sockets.length - 1 - left] as WebSocket;
        socket.close(1000);
        await once(socket, "close");
        await until(
          async () => (await open()) === Math.min(2, left) && (await queued()) === Math.max(0, left - 2),
          { observed: state },
        );
      }
      assert.equal(await gatewayMetric(base, "ledger_gateway_ledger_streams_refused_total"), 0);
    } finally {
      for (const socket of sockets) socket.terminate();
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });
});
