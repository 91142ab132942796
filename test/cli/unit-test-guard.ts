/**
 * `make test-unit` loads this in every test file's process (`node --import`): a test that starts
 * a process or a worker thread, listens or connects a socket fails, naming itself and what it
 * started, so the files `UNIT_TESTS` (Makefile) names stay the tests that start nothing. Inert in
 * the test runner's own process, which starts the files' processes.
 */
import childProcess from "node:child_process";
import dgram from "node:dgram";
import { createRequire, syncBuiltinESMExports } from "node:module";
import net from "node:net";
import workerThreads from "node:worker_threads";

if (process.env.NODE_TEST_CONTEXT !== undefined) {
  const refusal = (what: string) =>
    new Error(
      `make test-unit runs the tests that start no process and open no socket, and ${process.argv[1]} ${what}: take it out of UNIT_TESTS in the Makefile (make test runs it)`,
    );
  const refuse = (what: string) => () => {
    throw refusal(what);
  };
  const processes = childProcess as unknown as Record<string, unknown>;
  for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"])
    processes[name] = refuse(`starts a process (child_process.${name})`);
  (workerThreads as { Worker: unknown }).Worker = refuse("starts a worker thread");
  // Named imports of built-in modules read these only once the exports are synced.
  syncBuiltinESMExports();
  net.Server.prototype.listen = refuse("listens on a socket");
  net.Socket.prototype.connect = refuse("connects a socket");
  dgram.Socket.prototype.bind = refuse("binds a UDP socket");
  // uWS listens from C++, past net: its apps are refused where they are made.
  const uWS = createRequire(import.meta.url)("uWebSockets.js") as Record<string, unknown>;
  uWS.App = refuse("starts a uWS app");
  uWS.SSLApp = refuse("starts a uWS app");
}
