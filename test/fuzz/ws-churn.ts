import { readdirSync } from "node:fs";
import WebSocket from "ws";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import type { FuzzStack } from "./fuzz-stack.js";
import { memoryOf } from "./processes.js";

/**
 * WebSocket abuse at volume: many short bounded streams opened and ended in parallel, then many
 * open-ended streams held at once and dropped. Figures: how the sessions ended, the gateway's
 * RSS and open file descriptors before, at the peak and after.
 */
export interface ChurnFigures {
  cycles: number;
  held: number;
  /** Session ends per close code (`error`: the client saw a socket error). */
  closes: Record<string, number>;
  rssMiB: { before: number; peak: number; after: number };
  fds: { before: number; peak: number; after: number };
}

const MiB = 1024 * 1024;

function fdsOf(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

function session(url: string, token: string, query: object, holdMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`]);
    let timer: NodeJS.Timeout | undefined;
    socket.on("open", () => {
      socket.send(JSON.stringify(query));
      if (holdMs > 0) timer = setTimeout(() => socket.terminate(), holdMs);
    });
    socket.on("close", (code) => {
      clearTimeout(timer);
      resolve(holdMs > 0 ? "dropped by the client" : String(code));
    });
    socket.on("error", () => {
      clearTimeout(timer);
      resolve("error");
    });
  });
}

export async function wsChurn(
  stack: FuzzStack,
  token: string,
  cycles: number,
  held: number,
): Promise<ChurnFigures> {
  const pid = stack.gateway.pid;
  const url = `ws://127.0.0.1:${stack.gateway.port}/v2/updates`;
  const party = stack.names.parties[0] as string;
  const closes: Record<string, number> = {};
  const count = (end: string) => {
    closes[end] = (closes[end] ?? 0) + 1;
  };
  const before = { rss: memoryOf(pid)?.rss ?? 0, fds: fdsOf(pid) };
  let peakRss = before.rss;
  let peakFds = before.fds;
  const sample = setInterval(() => {
    peakRss = Math.max(peakRss, memoryOf(pid)?.rss ?? 0);
    peakFds = Math.max(peakFds, fdsOf(pid));
  }, 100);
  try {
    let next = 0;
    const bounded = updatesRequest(partyFilter(party), 0, stack.names.ledgerEnd);
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < cycles) {
          next++;
          count(await session(url, token, bounded, 0));
        }
      }),
    );
    const open = updatesRequest(partyFilter(party));
    const ends = await Promise.all(Array.from({ length: held }, () => session(url, token, open, 5_000)));
    for (const end of ends) count(end);
  } finally {
    clearInterval(sample);
  }
  // Closed sockets leave the gateway's tables shortly after: a moment for them to go.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const round = (n: number) => Math.round((n / MiB) * 10) / 10;
  return {
    cycles,
    held,
    closes,
    rssMiB: { before: round(before.rss), peak: round(peakRss), after: round(memoryOf(pid)?.rss ?? 0) },
    fds: { before: before.fds, peak: peakFds, after: fdsOf(pid) },
  };
}
