import { parseArgs } from "node:util";
import { pino } from "pino";
import { startSandbox } from "./sandbox.js";

/**
 * Standalone sandbox for benchmarks and manual use:
 * `node --import tsx src/sandbox/main.ts --port 6865 [--host 127.0.0.1] [--participant sandbox]`.
 * Prints the bound port on stdout (one line) and stops on SIGINT/SIGTERM.
 */
const { values } = parseArgs({
  options: {
    port: { type: "string", default: "6865" },
    host: { type: "string", default: "127.0.0.1" },
    participant: { type: "string", default: "sandbox" },
    "log-level": { type: "string", default: "info" },
  },
});

const sandbox = await startSandbox({
  port: Number(values.port),
  host: values.host,
  participantName: values.participant,
  log: pino({ level: values["log-level"] }, pino.destination(2)),
});
process.stdout.write(`${sandbox.port}\n`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void sandbox.stop().then(() => process.exit(0));
  });
}
