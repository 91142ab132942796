/**
 * Deprecated: `node dist/bench/rig/run.js ...` is `node dist/bench/load.js local ...` (`make bench`),
 * kept so that the commands the committed results and docs/performance.md quote still run. It
 * measures nothing of its own: it hands its arguments to the load tool, `--scenarios` renamed
 * `--scenario` (the load tool's name for it), and the results record the command that ran.
 */
const args = process.argv
  .slice(2)
  .map((arg) =>
    arg === "--scenarios"
      ? "--scenario"
      : arg.startsWith("--scenarios=")
        ? `--scenario=${arg.slice(12)}`
        : arg,
  );
if (!args.some((arg) => arg === "--help" || arg === "-h"))
  process.stderr.write("run.js is deprecated: it runs `ledger-json-gateway bench local` (make bench)\n");
process.argv.splice(2, process.argv.length - 2, "local", ...args);
await import("../load.js");
