/**
 * The storm scenario's client, a process of its own so that its CPU is never the gateway's
 * (bench/rig/scenarios/storm.ts starts two: one for the established subscribers, one for the storm).
 * One JSON job line on stdin, one JSON line on stdout per step:
 *   {"kind":"established","url","token","request","n"}  opens n WebSockets, sends the request on
 *       each and says {"ready"} once every one has its first frame; from then on it notes, for
 *       every frame whose Bench:Tick payload is a time stamp (ms since the epoch), how late it
 *       came. {"kind":"delays","from","to"} answers the delays of the frames received in that
 *       window (epoch ms): {"count","p50","p99","max"} (ms)
 *   {"kind":"storm","url","tokens","requests","n"}  opens n WebSockets at once, socket i with
 *       tokens[i % tokens.length] and requests[i % requests.length], each sending its request on
 *       open; an upgrade answered 503 is tried again after its Retry-After. Once every socket has
 *       its first frame (or failed): {"firstAllMs","p50FirstMs","p99FirstMs","opened","failed",
 *       "refused","retried","failures"?}; the sockets stay open until {"kind":"close"}: {"closed"}
 * Frames are searched, never parsed: the client must cost far less than the gateway.
 */
import { createInterface } from "node:readline";

/** What a storm job answers: when its sockets had their first frames, and what failed or was refused. */
export interface StormAnswer {
  firstAllMs: number;
  p50FirstMs: number;
  p99FirstMs: number;
  opened: number;
  failed: number;
  refused: number;
  retried: number;
  failures?: Record<string, number>;
}

import WebSocket from "ws";

type Job =
  | { kind: "established"; url: string; token: string; request: unknown; n: number }
  | { kind: "delays"; from: number; to: number }
  | { kind: "storm"; url: string; tokens: string[]; requests: unknown[]; n: number }
  | { kind: "close" };

const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const now = () => performance.timeOrigin + performance.now();
const sorted = (values: number[]) => values.sort((a, b) => a - b);
const pick = (values: readonly number[], p: number) =>
  values.length === 0
    ? Number.NaN
    : (values[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)] as number);
const round3 = (value: number) => Math.round(value * 1000) / 1000;

const open: WebSocket[] = [];
/** [received at, delay] of every stamped frame the established subscribers read. */
const delays: [number, number][] = [];
const STAMP = /"payload":"(\d+(?:\.\d+)?)"/;

function subscriber(url: string, token: string, request: string): WebSocket {
  const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`], { perMessageDeflate: false });
  socket.once("open", () => socket.send(request));
  socket.on("error", () => undefined);
  open.push(socket);
  return socket;
}

async function established(job: Extract<Job, { kind: "established" }>): Promise<void> {
  const request = JSON.stringify(job.request);
  await Promise.all(
    Array.from(
      { length: job.n },
      () =>
        new Promise<void>((resolve) => {
          const socket = subscriber(job.url, job.token, request);
          socket.once("message", () => resolve());
          socket.on("message", (data: Buffer) => {
            const stamp = STAMP.exec(data.toString("latin1"))?.[1];
            if (stamp !== undefined) {
              const at = now();
              delays.push([at, at - Number(stamp)]);
            }
          });
        }),
    ),
  );
  say({ ready: job.n });
}

function delaysIn(job: Extract<Job, { kind: "delays" }>): void {
  const window = sorted(delays.filter(([at]) => at >= job.from && at <= job.to).map(([, delay]) => delay));
  say({
    count: window.length,
    p50: round3(pick(window, 50)),
    p99: round3(pick(window, 99)),
    max: round3(window.at(-1) ?? Number.NaN),
  });
}

async function storm(job: Extract<Job, { kind: "storm" }>): Promise<void> {
  const requests = job.requests.map((request) => JSON.stringify(request));
  const started = now();
  let refused = 0;
  let retried = 0;
  let failed = 0;
  const firsts: number[] = [];
  /** Why sockets failed: error messages, close codes, statuses, counted. */
  const reasons = new Map<string, number>();
  const one = (i: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const socket = subscriber(
        job.url,
        job.tokens[i % job.tokens.length] as string,
        requests[i % requests.length] as string,
      );
      let done = false;
      const finish = (first: boolean) => {
        if (done) return;
        done = true;
        if (first) firsts.push(now() - started);
        else failed++;
        resolve();
      };
      socket.once("message", () => finish(true));
      socket.once("error", (error: Error) => {
        reasons.set(error.message, (reasons.get(error.message) ?? 0) + 1);
      });
      socket.once("close", (code: number) => {
        if (!done) reasons.set(`close ${code}`, (reasons.get(`close ${code}`) ?? 0) + 1);
        finish(false);
      });
      // A paced upgrade: 503 with Retry-After (seconds), tried again as a client would.
      socket.once("unexpected-response", (_req, res) => {
        done = true;
        if (res.statusCode !== 503) {
          reasons.set(`status ${res.statusCode}`, (reasons.get(`status ${res.statusCode}`) ?? 0) + 1);
          failed++;
          resolve();
          return;
        }
        refused++;
        const after = Number(res.headers["retry-after"] ?? 1);
        res.resume();
        setTimeout(
          () => {
            retried++;
            void one(i).then(resolve);
          },
          // After the time named, jittered over the second after it, as clients retry.
          (Math.max(0, after) + Math.random()) * 1000,
        );
      });
    });
  await Promise.all(Array.from({ length: job.n }, (_, i) => one(i)));
  const times = sorted(firsts);
  const answer: StormAnswer = {
    firstAllMs: round3(times.at(-1) ?? Number.NaN),
    p50FirstMs: round3(pick(times, 50)),
    p99FirstMs: round3(pick(times, 99)),
    opened: times.length,
    failed,
    refused,
    retried,
    ...(reasons.size > 0 && { failures: Object.fromEntries(reasons) }),
  };
  say(answer);
}

async function closeAll(): Promise<void> {
  const sockets = open.splice(0);
  await Promise.all(
    sockets.map((socket) =>
      socket.readyState === WebSocket.CLOSED
        ? undefined
        : new Promise<void>((resolve) => {
            socket.once("close", () => resolve());
            if (socket.readyState === WebSocket.OPEN) socket.close(1000);
            else socket.terminate();
          }),
    ),
  );
  say({ closed: sockets.length });
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const job = JSON.parse(line) as Job;
  if (job.kind === "established") await established(job);
  else if (job.kind === "delays") delaysIn(job);
  else if (job.kind === "storm") await storm(job);
  else await closeAll();
}
// stdin ended (the bench stops its clients so): the sockets left open must not keep it alive.
process.exit(0);
