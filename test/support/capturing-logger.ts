import { Writable } from "node:stream";
import { pino } from "pino";

/** A pino logger at `debug` whose entries the test reads back. */
export function capturingLogger(): { log: pino.Logger; entries: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return {
    log: pino({ level: "debug" }, sink),
    entries: () =>
      lines
        .join("")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
