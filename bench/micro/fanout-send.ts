/**
 * What one fan-out delivery costs the gateway's process, three ways of writing one frame to N
 * sockets: `ws.send(string)` per socket (what the shared stream does: the same string to every
 * member's SocketSink), `ws.send(Buffer)` per socket (the frame's bytes made once), and uWS
 * `app.publish(topic)` (one call, the loop in C++). Reports CPU per delivery
 * (process.cpuUsage over the window / (frames x sockets)); the clients run in a child process so
 * that their reading is not counted.
 *
 *   node --import tsx bench/micro/fanout-send.ts [--sockets 100] [--frames 2000] [--bytes 1024]
 */

import uWS from "uWebSockets.js";
import { fork } from "node:child_process";
import WebSocket from "ws";
import { commandLine } from "../lib/command-line.js";

const { values } = commandLine("micro/fanout-send.js", {
  sockets: { type: "string", default: "100" },
  frames: { type: "string", default: "2000" },
  bytes: { type: "string", default: "1024" },
});
const [sockets, frames, bytes] = [values.sockets, values.frames, values.bytes].map(Number) as [
  number,
  number,
  number,
];

/** Set in the child that holds the clients: the port it connects to. */
const CLIENTS_OF_PORT = process.env.FANOUT_SEND_CLIENTS_OF_PORT;

if (CLIENTS_OF_PORT !== undefined) {
  // Child: open the sockets, count frames, report when every socket got every frame.
  const port = Number(CLIENTS_OF_PORT);
  let open = 0;
  let received = 0;
  for (let i = 0; i < sockets; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    ws.on("open", () => {
      if (++open === sockets) process.send?.("open");
    });
    ws.on("message", () => {
      if (++received % (frames * sockets) === 0) process.send?.("done");
    });
  }
} else {
  await main();
}

async function main(): Promise<void> {
  const all: uWS.WebSocket<unknown>[] = [];
  const app = uWS.App().ws("/*", {
    maxBackpressure: 64 * 1024 * 1024,
    open: (ws) => {
      all.push(ws);
      ws.subscribe("frames");
    },
  });
  const port = await new Promise<number>((resolve) =>
    app.listen("127.0.0.1", 0, (socket) =>
      resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket)),
    ),
  );
  const child = fork(
    new URL(import.meta.url).pathname,
    ["--sockets", String(sockets), "--frames", String(frames), "--bytes", String(bytes)],
    {
      env: { ...process.env, FANOUT_SEND_CLIENTS_OF_PORT: String(port) },
      execArgv: ["--import", "tsx"],
    },
  );
  const next = () => new Promise<void>((resolve) => child.once("message", () => resolve()));
  await next();

  const text = `{"update":{"Transaction":{"value":{"offset":1,"payload":"${"x".repeat(bytes - 60)}"}}}}`;
  const buffer = Buffer.from(text);
  // Each writes a batch of `n` frames, as the SocketSink does once per event-loop turn: corked
  // per socket, one syscall per socket and batch.
  const ways: Record<string, (n: number) => void> = {
    "send(string)": (n) => {
      for (const ws of all)
        ws.cork(() => {
          for (let j = 0; j < n; j++) ws.send(text, false);
        });
    },
    "send(Buffer)": (n) => {
      for (const ws of all)
        ws.cork(() => {
          for (let j = 0; j < n; j++) ws.send(buffer, false);
        });
    },
    "publish(topic)": (n) => {
      for (let j = 0; j < n; j++) app.publish("frames", buffer, false);
    },
  };
  for (const [name, write] of Object.entries(ways)) {
    const done = next();
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    for (let i = 0; i < frames; i += 50) {
      write(Math.min(50, frames - i));
      await new Promise((r) => setImmediate(r));
    }
    const sendCpu = process.cpuUsage(cpu);
    await done;
    const totalCpu = process.cpuUsage(cpu);
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const deliveries = frames * sockets;
    const us = (c: NodeJS.CpuUsage) => ((c.user + c.system) / deliveries).toFixed(3);
    console.log(
      `${name.padEnd(15)} ${deliveries} deliveries of ${bytes} B: ${us(sendCpu)} µs CPU/delivery writing, ${us(totalCpu)} µs until all read, ${(deliveries / wall / 1000).toFixed(0)}k deliveries/s`,
    );
  }
  child.kill();
  app.close();
}
