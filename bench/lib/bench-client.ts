/**
 * The bench's load client, a process of its own so that its CPU is never the gateway's
 * (bench/lib/bench-client-process.ts starts it). One JSON command line on stdin per job, one
 * JSON line on stdout per step:
 *   {"kind":"subscribe","url","token","request","n","until"?,"deflate"?}  opens n WebSockets
 *       (offering permessage-deflate with `deflate`), says {"ready"}; on "go" sends the one
 *       request on all of them and, once all closed, reports deliveries, first/last offsets and
 *       the bytes read: off the TCP sockets (`wireBytes`) and as messages (`textBytes`). With
 *       `until` (an open-ended request) each socket closes itself with 1000 once a frame names
 *       that offset
 *   {"kind":"idle","url","token","n"}  opens n WebSockets and sends nothing: {"ready"}; on
 *       "close" closes them: {"closed"}
 *   {"kind":"http","url","token","body","concurrency","seconds","unique"?}  POSTs the body back
 *       to back from `concurrency` loops for `seconds`, with every `unique` in it replaced by a
 *       number of this process's own (command ids): {"requests","failures","seconds","bytes"}
 *   {"kind":"streams","url","token","request","concurrency","seconds"}  from `concurrency` loops
 *       for `seconds`: open a WebSocket, send the (bounded) request, count its frames and bytes
 *       until the server closes it, again: {"streams","frames","bytes","failures","seconds"}.
 *       Frames are counted, never decoded: the client must cost far less than the gateway.
 */
import { createInterface } from "node:readline";
import WebSocket from "ws";

type Job =
  | {
      kind: "subscribe";
      url: string;
      token: string;
      request: unknown;
      n: number;
      until?: number;
      deflate?: boolean;
    }
  | { kind: "idle"; url: string; token: string; n: number }
  | {
      kind: "http";
      url: string;
      token: string;
      body: string;
      concurrency: number;
      seconds: number;
      unique?: string;
    }
  | {
      kind: "streams";
      url: string;
      token: string;
      request: unknown;
      concurrency: number;
      seconds: number;
    };

const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const input = createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();
const nextLine = async (): Promise<string> => {
  const next = await lines.next();
  if (next.done) process.exit(0);
  return next.value as string;
};

function open(url: string, token: string, deflate = false): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`], { perMessageDeflate: deflate });
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Opens n sockets, a few hundred at a time (a burst of 10,000 SYNs overflows the backlog). */
async function openMany(url: string, token: string, n: number, deflate = false): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += 200) {
    const batch = Math.min(200, n - i);
    sockets.push(...(await Promise.all(Array.from({ length: batch }, () => open(url, token, deflate)))));
  }
  return sockets;
}

/** What a socket read off its TCP connection (the upgrade's answer included). */
const bytesRead = (socket: WebSocket): number =>
  (socket as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;

const offsetOf = (text: string | undefined) =>
  text === undefined ? undefined : Number(/"offset":(\d+)/.exec(text)?.[1] ?? Number.NaN);

async function subscribe(job: Extract<Job, { kind: "subscribe" }>): Promise<void> {
  const sockets = await openMany(job.url, job.token, job.n, job.deflate);
  say({ ready: sockets.length });
  await nextLine();
  const wireBefore = sockets.reduce((sum, socket) => sum + bytesRead(socket), 0);
  let textBytes = 0;
  let wireBytes = 0;
  const frame = JSON.stringify(job.request);
  // The frame at `until`: a transaction's or checkpoint's offset field, the digits ending there.
  const untilNeedles =
    job.until === undefined
      ? []
      : [`"offset":${job.until},`, `"offset":${job.until}}`].map((n) => Buffer.from(n));
  let deliveries = 0;
  let errors = 0;
  const firsts: (number | undefined)[] = [];
  const lasts: (number | undefined)[] = [];
  await Promise.all(
    sockets.map(
      (socket, i) =>
        new Promise<void>((resolve) => {
          let first: Buffer | undefined;
          let last: Buffer | undefined;
          socket.on("message", (data: Buffer) => {
            // Offsets only of the first and last frames, decoded at the end; each frame's bytes
            // are only searched for the last offset: decoding or parsing every one would cost
            // this process more CPU than the gateway spends sending it.
            first ??= data;
            last = data;
            deliveries++;
            textBytes += data.byteLength;
            for (const needle of untilNeedles) if (data.includes(needle)) socket.close(1000);
          });
          socket.once("close", (code) => {
            if (code !== 1000) errors++;
            wireBytes += bytesRead(socket);
            firsts[i] = offsetOf(first?.toString("utf8"));
            lasts[i] = offsetOf(last?.toString("utf8"));
            resolve();
          });
          socket.send(frame);
        }),
    ),
  );
  const known = (values: (number | undefined)[]) => values.filter((v): v is number => v !== undefined);
  say({
    deliveries,
    errors,
    textBytes,
    wireBytes: wireBytes - wireBefore,
    firstOffsets: [...new Set(known(firsts))],
    lastOffsets: [...new Set(known(lasts))],
  });
}

async function idle(job: Extract<Job, { kind: "idle" }>): Promise<void> {
  const sockets = await openMany(job.url, job.token, job.n);
  let closedByServer = 0;
  for (const socket of sockets) socket.once("close", () => closedByServer++);
  say({ ready: sockets.length });
  await nextLine();
  const open = sockets.length - closedByServer;
  await Promise.all(
    sockets.map((socket) =>
      socket.readyState === WebSocket.CLOSED
        ? undefined
        : new Promise<void>((resolve) => {
            socket.once("close", () => resolve());
            socket.close(1000);
          }),
    ),
  );
  say({ closed: sockets.length, stillOpenAtClose: open });
}

/** Numbers handed to `unique` so far: never reused by a later job of this process. */
let uniqueSent = 0;

async function http(job: Extract<Job, { kind: "http" }>): Promise<void> {
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(job.seconds * 1e9));
  let requests = 0;
  let bytes = 0;
  let failures = 0;
  const { unique } = job;
  const nextBody = () =>
    unique === undefined ? job.body : job.body.replaceAll(unique, `${process.pid}-${uniqueSent++}`);
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (process.hrtime.bigint() < until) {
        const res = await fetch(job.url, {
          method: "POST",
          headers: { authorization: `Bearer ${job.token}` },
          body: nextBody(),
        });
        const body = await res.arrayBuffer();
        if (res.status === 200) {
          requests++;
          bytes += body.byteLength;
        } else failures++;
      }
    }),
  );
  say({ requests, failures, bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
}

async function streams(job: Extract<Job, { kind: "streams" }>): Promise<void> {
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(job.seconds * 1e9));
  const frame = JSON.stringify(job.request);
  let count = 0;
  let frames = 0;
  let bytes = 0;
  let failures = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const socket = new WebSocket(job.url, ["daml.ws.auth", `jwt.token.${job.token}`], {
        perMessageDeflate: false,
      });
      socket.once("open", () => socket.send(frame));
      socket.on("message", (data: Buffer) => {
        frames++;
        bytes += data.byteLength;
      });
      socket.once("error", () => undefined);
      socket.once("close", (code) => {
        if (code === 1000) count++;
        else failures++;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (process.hrtime.bigint() < until) await one();
    }),
  );
  say({ streams: count, frames, bytes, failures, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
}

for (;;) {
  const job = JSON.parse(await nextLine()) as Job;
  if (job.kind === "subscribe") await subscribe(job);
  else if (job.kind === "idle") await idle(job);
  else if (job.kind === "streams") await streams(job);
  else await http(job);
}
