import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { adminPost } from "../support/admin-post.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";

const TICKETS = 8;

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

/** One request on a connection of its own (agent: false): the kernel picks its worker anew. */
function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A ticket's stream read on a connection of its own: its status and first event id; `drop` ends it. */
function firstEvent(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; id: string; drop: () => void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      url,
      { headers: { accept: "text/event-stream", ...headers }, agent: false },
      (res) => {
        const drop = () => req.destroy();
        if (res.statusCode !== 200) {
          res.resume();
          resolve({ status: res.statusCode ?? 0, id: "", drop });
          return;
        }
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
          const id = /^id: (.+)$/m.exec(text)?.[1];
          if (id !== undefined) resolve({ status: 200, id, drop });
        });
      },
    );
    req.on("error", (error) => {
      if (!req.destroyed) reject(error);
    });
  });
}

/**
 * Issue 40 with server.workers 2: a ticket is issued by one worker thread and its GET, its
 * renewal and its reconnect reach whichever the kernel picks (each on a connection of its own).
 * Without the workers asking each other (ticket-exchange.ts) about half of these would be 401.
 */
describe("stream tickets with server.workers 2", () => {
  it("opens, renews and resumes every ticket whichever worker each request reaches", async () => {
    const gateway = startCli(["--server.workers", "2"]);
    try {
      const base = `http://127.0.0.1:${await gateway.port}`;
      const { partyDetails } = (await adminPost(base, "/v2/parties", { partyIdHint: "workers_ticket" })) as {
        partyDetails: { party: string };
      };
      const party = partyDetails.party;
      const token = tokenFor(`actAs-${party}`);
      const auth = { authorization: `Bearer ${token}` };
      const committed = await exchange(
        `${base}/v2/commands/submit-and-wait`,
        "POST",
        auth,
        JSON.stringify(tickCommands("workers-ticket-1", party, 1)),
      );
      assert.equal(committed.status, 200, committed.text);
      const outcomes: string[] = [];
      for (let i = 0; i < TICKETS; i++) {
        const issued = await exchange(
          `${base}/v2/updates/stream-ticket`,
          "POST",
          auth,
          JSON.stringify(updatesRequest(partyFilter(party))),
        );
        assert.equal(issued.status, 200, issued.text);
        const { ticket } = JSON.parse(issued.text) as { ticket: string };
        const url = `${base}/v2/updates?ticket=${encodeURIComponent(ticket)}`;
        const first = await firstEvent(url, {});
        first.drop();
        // The browser's reconnect after a drop, with the resume key of the ids it got.
        const key = first.id.split(".")[0] as string;
        const reconnect = await firstEvent(url, { "last-event-id": `${key}.0` });
        // Until the gateway has seen the first connection go, the stream may be between readers (409).
        let renewal = { status: 0, text: "" };
        await until(async () => {
          renewal = await exchange(
            `${base}/v2/stream-tickets/renewal`,
            "POST",
            { authorization: `Bearer ${tokenFor(`actAs-${party}`, { i })}` },
            JSON.stringify({ ticket }),
          );
          return renewal.status !== 409;
        });
        reconnect.drop();
        outcomes.push(`${first.status} ${reconnect.status} ${renewal.status} ${renewal.text.slice(0, 30)}`);
      }
      assert.deepEqual(
        outcomes,
        Array(TICKETS).fill('200 200 200 {"tokenRenewed":{"expiresAt":"'),
        outcomes.join("\n"),
      );
    } finally {
      gateway.child.kill("SIGTERM");
      await once(gateway.child, "exit");
    }
  });
});
