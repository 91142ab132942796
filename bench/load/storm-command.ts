import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../lib/command-line.js";
import { type BenchClient, startBenchClient } from "../lib/processes.js";
import type { StormAnswer } from "../lib/storm-client.js";
import { updatesRequest } from "../rig/scenarios/fanout.js";

/**
 * `ledger-json-gateway bench storm` (issue 39): a reconnect storm against a deployment the tool did not start. N
 * WebSockets open `/v2/updates` at once (socket i with the (i mod K)-th token of --tokens-file and
 * the (i mod Q)-th query), each waits for its first element; a 503 is retried after its
 * Retry-After, as clients do. It reports what a client sees: when every socket had its first
 * element, the p50/p99 of those times, failures by cause, 503s. The server's CPU per start and
 * its ledger calls are `make bench ARGS="--scenario storm"`'s (on processes it starts). The
 * sockets are spread over client processes of their own (bench/lib/storm-client.ts).
 */
const STORM_FLAGS = {
  url: { type: "string" },
  "tokens-file": { type: "string" },
  party: { type: "string" },
  "query-file": { type: "string" },
  subscribers: { type: "string", default: "1000" },
  "sockets-per-client": { type: "string", default: "5000" },
  out: { type: "string", default: "." },
} as const;

const STORM_HELP = `Opens --subscribers WebSockets on URL/v2/updates at once and waits for each one's first element.

  --url URL                the deployment, e.g. http://127.0.0.1:7575 (required)
  --tokens-file FILE       tokens, one a line (required): socket i carries the (i mod K)-th
  --party P                the query: P's updates from offset 0, open-ended (every template)
  --query-file FILE        or the query frames, a JSON array: socket i sends the (i mod Q)-th
  --subscribers N          sockets in the storm
  --sockets-per-client N   sockets each client process opens (file limits are raised to the hard limit)
  --out DIR                where storm-<time>.json goes

Prints and writes: when every socket had its first element, p50/p99 of those times, sockets
failed (by cause), upgrades refused 503 and retried.`;

const seconds = (ms: number) => Math.round(ms) / 1000;

export async function stormCommand(): Promise<number> {
  const { values } = commandLine("ledger-json-gateway bench storm", STORM_FLAGS, undefined, STORM_HELP);
  const fault = (text: string) => {
    process.stderr.write(`ledger-json-gateway bench storm: ${text}\n`);
    return 2;
  };
  if (values.url === undefined) return fault("--url is required");
  if (values["tokens-file"] === undefined) return fault("--tokens-file is required");
  const tokens = readFileSync(values["tokens-file"], "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (tokens.length === 0) return fault(`${values["tokens-file"]} holds no token`);
  let queries: unknown[];
  if (values["query-file"] !== undefined) {
    queries = JSON.parse(readFileSync(values["query-file"], "utf8")) as unknown[];
    if (!Array.isArray(queries) || queries.length === 0)
      return fault("--query-file holds a JSON array of query frames");
  } else if (values.party !== undefined) {
    queries = [updatesRequest(values.party, 0, undefined)];
  } else return fault("--party or --query-file names the query");
  const n = Number(values.subscribers);
  const perClient = Number(values["sockets-per-client"]);
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(perClient) || perClient < 1)
    return fault("--subscribers and --sockets-per-client take whole numbers of at least 1");
  const url = `${values.url.replace(/^http/, "ws").replace(/\/$/, "")}/v2/updates`;
  const clients: BenchClient[] = Array.from({ length: Math.ceil(n / perClient) }, () =>
    startBenchClient(true, "bench/lib/storm-client"),
  );
  try {
    const shares = clients.map((_, i) => Math.floor(n / clients.length) + (i < n % clients.length ? 1 : 0));
    const startedAt = new Date();
    // Each client's sockets start at the same token and query offsets as a single one's would.
    let first = 0;
    for (const [i, client] of clients.entries()) {
      const share = shares[i] as number;
      const rotate = <T>(list: T[]) => list.map((_, j) => list[(first + j) % list.length] as T);
      client.send({ kind: "storm", url, tokens: rotate(tokens), requests: rotate(queries), n: share });
      first += share;
    }
    const answers = await Promise.all(clients.map((client) => client.next<StormAnswer>()));
    const failures: Record<string, number> = {};
    for (const answer of answers)
      for (const [cause, count] of Object.entries(answer.failures ?? {}))
        failures[cause] = (failures[cause] ?? 0) + count;
    const result = {
      tool: "ledger-json-gateway bench storm",
      date: startedAt.toISOString(),
      url,
      subscribers: n,
      tokens: tokens.length,
      queries: queries.length,
      clientProcesses: clients.length,
      firstAllSeconds: seconds(Math.max(...answers.map((a) => a.firstAllMs))),
      // Per client process: the slowest client's p50 and p99 (each its own share of the crowd).
      p50FirstSeconds: seconds(Math.max(...answers.map((a) => a.p50FirstMs))),
      p99FirstSeconds: seconds(Math.max(...answers.map((a) => a.p99FirstMs))),
      opened: answers.reduce((sum, a) => sum + a.opened, 0),
      failed: answers.reduce((sum, a) => sum + a.failed, 0),
      failures,
      refused503: answers.reduce((sum, a) => sum + a.refused, 0),
      retried: answers.reduce((sum, a) => sum + a.retried, 0),
    };
    const dir = resolve(values.out);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `storm-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`, { flag: "wx" });
    console.log(
      `storm of ${n} (${tokens.length} token(s), ${queries.length} query(ies)): every first element after ` +
        `${result.firstAllSeconds} s (p50 ${result.p50FirstSeconds} s, p99 ${result.p99FirstSeconds} s), ` +
        `${result.failed} failed${result.failed > 0 ? ` ${JSON.stringify(failures)}` : ""}, ` +
        `${result.refused503} refused 503 and retried; wrote ${file}`,
    );
    return result.failed > 0 ? 1 : 0;
  } finally {
    for (const client of clients) {
      client.send({ kind: "close" });
      await client.next().catch(() => undefined);
      await client.stop();
    }
  }
}
