/**
 * What a WebSocket upgrade made after an asynchronous step (the gateway's ledger admission)
 * costs bare uWebSockets.js, and whether it keeps its socket, three ways: `uncorked` (res.upgrade
 * outside any cork: every piece of the 101 is its own send(), and uWS.js warns on stderr),
 * `corked` (inside res.cork, as uWS asks: uWebSockets.js 3.0.6's cork() may then shut the new
 * socket down, uNetworking/uWebSockets#1929) and `fixed` (src/ws/corked-upgrade.ts). Reports CPU
 * per upgrade (process.cpuUsage over the window / upgrades: the clients run in a child process)
 * and the sockets lost: a client whose socket closed other than with the server's 1000 after its
 * one message. The modes take turns in rounds, each round in the same process.
 *
 *   MALLOC_PERTURB_=16 node --import tsx bench/micro/async-upgrade.ts [--upgrades 2000]
 *     [--concurrency 20] [--rounds 3] [--modes uncorked,corked,fixed] [--open-work 0]
 *     [--compression off]
 *
 * glibc's MALLOC_PERTURB_=16 fills freed memory with exactly the "connection: close" bit that the
 * faulty cork() reads from the freed HTTP state: it makes #1929 frequent enough to count.
 * `--open-work N` allocates N small buffers in `open`, as a server's open handler may.
 */

import uWS from "uWebSockets.js";
import { fork } from "node:child_process";
import WebSocket from "ws";
import { CorkedUpgrade } from "../../src/ws/corked-upgrade.js";
import { commandLine } from "../lib/command-line.js";

const { values } = commandLine("micro/async-upgrade.js", {
  upgrades: { type: "string", default: "2000" },
  concurrency: { type: "string", default: "20" },
  rounds: { type: "string", default: "3" },
  modes: { type: "string", default: "uncorked,corked,fixed" },
  "open-work": { type: "string", default: "0" },
  compression: { type: "string", default: "off" },
});
const upgrades = Number(values.upgrades);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const openWork = Number(values["open-work"]);
/** permessage-deflate as the gateway's websocket-config.compression on sets it (the clients offer it). */
const compression = values.compression === "on" ? uWS.SHARED_COMPRESSOR : uWS.DISABLED;

type Mode = "uncorked" | "corked" | "fixed";
interface Data {
  messaged?: true;
}
const MODES: readonly Mode[] = ["uncorked", "corked", "fixed"];
const modes = values.modes.split(",").map((name) => {
  const mode = MODES.find((known) => known === name);
  if (mode === undefined) throw new Error(`--modes: ${name} is none of ${MODES.join(", ")}`);
  return mode;
});

/** Set in the child that holds the clients: the port it connects to. */
const CLIENTS_OF_PORT = process.env.ASYNC_UPGRADE_CLIENTS_OF_PORT;

if (CLIENTS_OF_PORT !== undefined) {
  // Child: on each "go" from the parent, upgrade `upgrades` sockets, `concurrency` at a time;
  // each sends one message, which the server answers with a close 1000. Reports the close codes.
  const url = `ws://127.0.0.1:${CLIENTS_OF_PORT}/`;
  const one = () =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(url);
      socket.on("open", () => socket.send("hello"));
      socket.on("error", () => undefined);
      socket.on("close", (code) => resolve(code));
    });
  process.on("message", async () => {
    const codes: Record<number, number> = {};
    let next = upgrades;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next-- > 0) {
          const code = await one();
          codes[code] = (codes[code] ?? 0) + 1;
        }
      }),
    );
    process.send?.(codes);
  });
  process.send?.("ready");
} else {
  await main();
}

async function main(): Promise<void> {
  let mode: Mode = "uncorked";
  let held: unknown[] = [];
  const corked = new CorkedUpgrade<Data>();
  // A server's open work (the gateway's: its socket's bookkeeping); `fixed` runs it after the cork.
  const opened = () => {
    if (openWork > 0) held = Array.from({ length: openWork }, () => new ArrayBuffer(48));
  };
  /** Inside the cork of an upgrade: a close now is cork()'s (#1929), not the client's. */
  let upgrading = false;
  let closedInCork = 0;
  let closedBeforeMessage = 0;
  const app = uWS.App().ws<Data>("/*", {
    idleTimeout: 0,
    compression,
    upgrade: (res, req, context) => {
      const key = req.getHeader("sec-websocket-key");
      const protocol = req.getHeader("sec-websocket-protocol");
      const extensions = req.getHeader("sec-websocket-extensions");
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      const upgradeNow = () => res.upgrade<Data>({}, key, protocol, extensions, context);
      const headers = { key, protocol, extensions, context };
      // The asynchronous step: the admission's answer comes in a later turn.
      setImmediate(() => {
        if (aborted) return;
        upgrading = true;
        if (mode === "uncorked") upgradeNow();
        else if (mode === "corked") res.cork(upgradeNow);
        else if (corked.upgrade(res, {}, headers) !== undefined) opened();
        upgrading = false;
      });
    },
    open: (ws) => {
      if (!corked.handOver(ws)) opened();
    },
    message: (ws) => {
      ws.getUserData().messaged = true;
      ws.end(1000);
    },
    close: (ws) => {
      corked.closing(ws);
      if (upgrading) closedInCork++;
      else if (!ws.getUserData().messaged) closedBeforeMessage++;
    },
  });
  const port = await new Promise<number>((resolve) =>
    app.listen("127.0.0.1", 0, (socket) =>
      resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket)),
    ),
  );
  const child = fork(new URL(import.meta.url).pathname, process.argv.slice(2), {
    env: { ...process.env, ASYNC_UPGRADE_CLIENTS_OF_PORT: String(port), MALLOC_PERTURB_: "" },
    execArgv: ["--import", "tsx"],
  });
  const next = () => new Promise<unknown>((resolve) => child.once("message", resolve));
  await next();

  const totals = new Map<Mode, { cpu: number; upgrades: number; lost: number }>();
  for (let round = 0; round < rounds; round++) {
    for (const current of modes) {
      mode = current;
      const cpu = process.cpuUsage();
      const answered = next();
      child.send("go");
      const codes = (await answered) as Record<string, number>;
      const used = process.cpuUsage(cpu);
      const kept = codes["1000"] ?? 0;
      const total = totals.get(current) ?? { cpu: 0, upgrades: 0, lost: 0 };
      totals.set(current, {
        cpu: total.cpu + used.user + used.system,
        upgrades: total.upgrades + upgrades,
        lost: total.lost + upgrades - kept,
      });
      console.log(
        `round ${round + 1} ${current.padEnd(8)} close codes ${JSON.stringify(codes)}, server: ${closedInCork} closed in the upgrade's cork, ${closedBeforeMessage} closed later before their message`,
      );
      closedInCork = 0;
      closedBeforeMessage = 0;
    }
  }
  void held;
  for (const [current, { cpu, upgrades: n, lost }] of totals) {
    console.log(
      `${current.padEnd(8)} ${n} upgrades: ${(cpu / n).toFixed(1)} µs server CPU per upgrade (open, one message, close), ${lost} sockets lost`,
    );
  }
  child.kill();
  app.close();
}
