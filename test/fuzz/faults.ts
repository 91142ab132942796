import WebSocket from "ws";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import type { FuzzStack } from "./fuzz-stack.js";

/**
 * Ledger faults, injected into the running stack, and what the gateway made of them: what
 * /readyz and a control request answered meanwhile, what an open WebSocket stream received,
 * and how long after the ledger came back the gateway served again. Figures, not assertions:
 * the timing depends on the machine.
 */
export interface ProbeLog {
  /** /readyz answers while the fault lasted, per status (0: no answer within 2 s). */
  readyz: Record<string, number>;
  /** /v2/version answers while the fault lasted, per status (0: none within the timeout). */
  version: Record<string, number>;
}

export interface StreamEnd {
  closeCode: number | "none";
  /** The last frame before the close, cut. */
  lastFrame: string;
  frames: number;
}

export interface FaultFigures {
  kind: "freeze" | "kill-restart";
  faultSeconds: number;
  during: ProbeLog;
  /** A WebSocket stream open when the fault began. */
  stream: StreamEnd;
  /** From the ledger's return (SIGCONT, or the new process listening) to the first 200. */
  recoverySeconds: { version: number | null; readyz: number | null };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Probes /readyz and /v2/version for `seconds`, while the fault lasts. */
async function probeFor(stack: FuzzStack, seconds: number): Promise<ProbeLog> {
  const log: ProbeLog = { readyz: {}, version: {} };
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const [ready, version] = await Promise.all([
      stack.control("/readyz", 2_000),
      stack.control("/v2/version", 6_000),
    ]);
    log.readyz[ready] = (log.readyz[ready] ?? 0) + 1;
    log.version[version] = (log.version[version] ?? 0) + 1;
    await sleep(250);
  }
  return log;
}

/** Until 10 answers in a row are 200, each on a new connection (so every worker thread is asked). */
async function secondsUntil200(stack: FuzzStack, path: string, boundSeconds: number): Promise<number | null> {
  const started = performance.now();
  let inARow = 0;
  let firstOfRow = started;
  while (performance.now() - started < boundSeconds * 1000) {
    if ((await stack.control(path, 2_000)) === 200) {
      if (inARow === 0) firstOfRow = performance.now();
      if (++inARow === 10) return Math.round(firstOfRow - started) / 1000;
    } else {
      inARow = 0;
      await sleep(50);
    }
  }
  return null;
}

/** From the ledger's return to the first 200s, for a data call and for readiness. */
async function recoveryOf(stack: FuzzStack): Promise<FaultFigures["recoverySeconds"]> {
  const [version, readyz] = await Promise.all([
    secondsUntil200(stack, "/v2/version", 60),
    secondsUntil200(stack, "/readyz", 60),
  ]);
  return { version, readyz };
}

/** An open-ended update stream of the first fuzz party, as a client holding it would. */
function openStream(stack: FuzzStack, token: string): { ended: Promise<StreamEnd>; close(): void } {
  const socket = new WebSocket(`ws://127.0.0.1:${stack.gateway.port}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  let frames = 0;
  let lastFrame = "";
  const ended = new Promise<StreamEnd>((resolve) => {
    socket.on("open", () =>
      socket.send(JSON.stringify(updatesRequest(partyFilter(stack.names.parties[0] as string)))),
    );
    socket.on("message", (data: Buffer) => {
      frames++;
      lastFrame = data.toString("utf8", 0, Math.min(data.length, 600));
    });
    socket.on("close", (code) => resolve({ closeCode: code, lastFrame, frames }));
    socket.on("error", () => resolve({ closeCode: "none", lastFrame, frames }));
  });
  return { ended, close: () => socket.terminate() };
}

async function streamOutcome(
  stream: { ended: Promise<StreamEnd>; close(): void },
  waitMs: number,
): Promise<StreamEnd> {
  const outcome = await Promise.race([stream.ended, sleep(waitMs).then(() => undefined)]);
  stream.close();
  return outcome ?? { ...(await stream.ended), closeCode: "none" };
}

/** SIGSTOP the ledger for `seconds`, probing meanwhile, then SIGCONT and time the recovery. */
export async function freezeLedger(stack: FuzzStack, token: string, seconds: number): Promise<FaultFigures> {
  const stream = openStream(stack, token);
  await sleep(1_000);
  stack.sandbox.child.kill("SIGSTOP");
  const during = await probeFor(stack, seconds);
  stack.sandbox.child.kill("SIGCONT");
  const recoverySeconds = await recoveryOf(stack);
  return {
    kind: "freeze",
    faultSeconds: seconds,
    during,
    stream: await streamOutcome(stream, 3_000),
    recoverySeconds,
  };
}

/** SIGKILL the ledger, leave it down `seconds`, start a new one on its port and time the recovery. */
export async function killAndRestartLedger(
  stack: FuzzStack,
  token: string,
  seconds: number,
): Promise<FaultFigures> {
  const stream = openStream(stack, token);
  await sleep(1_000);
  const port = stack.sandbox.port;
  stack.sandbox.child.kill("SIGKILL");
  const streamEnd = streamOutcome(stream, seconds * 1000);
  const during = await probeFor(stack, seconds);
  await stack.restartSandbox();
  if (stack.sandbox.port !== port) throw new Error("the sandbox came back on another port");
  const recoverySeconds = await recoveryOf(stack);
  return {
    kind: "kill-restart",
    faultSeconds: seconds,
    during,
    stream: await streamEnd,
    recoverySeconds,
  };
}
