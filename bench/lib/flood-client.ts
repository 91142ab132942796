/**
 * The fairness scenario's flood (bench/rig/scenarios/fairness.ts): one user's noisy client, a
 * process of its own so that the bench's measuring loop is never starved by it. One JSON job line
 * on stdin starts the flood and it says {"started"}; "mark" starts its counts over (the measured
 * window begins), "stop" ends the flood: it closes what it holds and says what it got since the
 * mark ({@link FloodReport}), then exits.
 *
 * What a client that ignores `retryInfo` does: `concurrency` loops of submit-and-wait back to back,
 * a 429 retried at once; `sockets` loops each holding a WebSocket with an open-ended /v2/updates
 * request on it, reopened as soon as it is closed (a refused one is closed with 1013 at once).
 */
import http from "node:http";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import WebSocket from "ws";
import { tickCommands } from "./tick-commands.js";

export interface FloodJob {
  /** The gateway's HTTP base, `http://127.0.0.1:PORT`. */
  base: string;
  token: string;
  party: string;
  /** submit-and-wait loops. */
  concurrency: number;
  /** WebSocket loops, each with a /v2/updates request on its socket. */
  sockets: number;
  /** The /v2/updates request each socket sends. */
  updatesRequest: unknown;
}

export interface FloodReport {
  seconds: number;
  /** submit-and-wait answers by HTTP status; `error` for a connection that failed. */
  submitAnswers: Record<string, number>;
  webSockets: {
    /** Upgrades that succeeded (a refused socket is upgraded, then closed with 1013). */
    opened: number;
    /** Closes by code (1013: refused past a cap). */
    closes: Record<string, number>;
    /** Frames received: the error frames of refusals and the updates of accepted streams. */
    frames: number;
    /** Sockets open when the flood stopped. */
    openAtStop: number;
  };
}

const count = (counts: Record<string, number>, key: string | number) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

function submit(agent: http.Agent, job: FloodJob, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(
      `${job.base}/v2/commands/submit-and-wait`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${job.token}`,
          "content-type": "application/json",
          "content-length": body.length,
        },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(String(res.statusCode)));
        res.once("error", () => resolve("error"));
      },
    );
    req.once("error", () => resolve("error"));
    req.end(body);
  });
}

async function flood(job: FloodJob, control: AsyncIterator<string>): Promise<void> {
  let submitAnswers: Record<string, number> = {};
  let opened = 0;
  let closes: Record<string, number> = {};
  let frames = 0;
  let stopping = false;
  let started = process.hrtime.bigint();
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
  const run = `${process.pid}-${Date.now()}`;
  let seq = 0;
  const submitting = Array.from({ length: job.concurrency }, async () => {
    while (!stopping) {
      const i = seq++;
      const body = Buffer.from(JSON.stringify(tickCommands(`fair-flood-${run}-${i}`, job.party, i)));
      const status = await submit(agent, job, body);
      count(submitAnswers, status);
    }
  });
  const open = new Set<WebSocket>();
  const wsUrl = `${job.base.replace(/^http/, "ws")}/v2/updates`;
  const frame = JSON.stringify(job.updatesRequest);
  const oneSocket = () =>
    new Promise<void>((resolve) => {
      const socket = new WebSocket(wsUrl, ["daml.ws.auth", `jwt.token.${job.token}`], {
        perMessageDeflate: false,
      });
      socket.once("open", () => {
        opened++;
        if (stopping) socket.close(1000);
        else {
          open.add(socket);
          socket.send(frame);
        }
      });
      socket.on("message", () => {
        frames++;
      });
      socket.once("error", () => undefined);
      socket.once("close", (code) => {
        open.delete(socket);
        count(closes, code);
        resolve();
      });
    });
  const socketing = Array.from({ length: job.sockets }, async () => {
    while (!stopping) await oneSocket();
  });
  process.stdout.write(`${JSON.stringify({ started: true })}\n`);
  for (;;) {
    const next = await control.next();
    const line = next.done ? "stop" : (next.value as string).trim();
    if (line === "mark") {
      submitAnswers = {};
      closes = {};
      opened = 0;
      frames = 0;
      started = process.hrtime.bigint();
      process.stdout.write(`${JSON.stringify({ marked: true })}\n`);
      continue;
    }
    break;
  }
  stopping = true;
  const report: FloodReport = {
    seconds: Math.round((Number(process.hrtime.bigint() - started) / 1e9) * 100) / 100,
    submitAnswers: { ...submitAnswers },
    webSockets: { opened, closes: { ...closes }, frames, openAtStop: open.size },
  };
  for (const socket of open) socket.close(1000);
  // What is still in flight is not waited for: the process exits, its sockets with it.
  await Promise.race([
    Promise.all([...submitting, ...socketing]),
    new Promise((resolve) => setTimeout(resolve, 500)),
  ]);
  agent.destroy();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

// Started as a process (bench/lib/processes.ts); the scenario only imports its types.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const control = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await control.next();
  if (!first.done) await flood(JSON.parse(first.value as string) as FloodJob, control);
  process.exit(0);
}
