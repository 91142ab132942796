import { setPriority } from "node:os";
import { mintToken } from "../../src/jwt/mint-token.js";
import { startBenchClient, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { LocalBench } from "./ledger.js";
import type { StormResult } from "./result.js";
import { allocateParty } from "./scenarios/fairness.js";
import { updatesRequest } from "./scenarios/fanout.js";
import {
  firstFrames,
  measuredStorm,
  STORM_QUERY_FORMS,
  startTicker,
  stormPoint,
  stormQueries,
} from "./scenarios/storm.js";

/** Ticks in the storm's ledger: the crowd's first element exists, its history is short. */
const PRELOADED = 3;

/**
 * storm (issue 39): a sandbox of 3 ticks, a fresh one-worker gateway per point, established
 * subscribers streaming live ticks in one client process and the crowd in another
 * (bench/lib/storm-client.ts), a ticker submitting to the ledger directly.
 */
export async function storm(bench: LocalBench): Promise<StormResult | undefined> {
  const o = bench.options;
  if (!o.scenarios.has("storm")) return undefined;
  const say = bench.progress("storm");
  const sandbox = await startSandboxProcess(PRELOADED, o.payloadBytes, 1);
  const party = sandbox.tickParty;
  const owner = (n: number) =>
    // Distinct tokens of the ticks' owner (each its own expiry): the ledger judges each one.
    mintToken({ user: `actAs-${party}`, secret: "bench", expiresInSeconds: 3600 + n });
  const result: StormResult = {
    scenario:
      `N WebSockets open /v2/updates from offset 0 at once (socket i: token i mod K, query i mod Q) against one ` +
      `gateway worker while ${o.stormEstablished} established subscribers stream another party's live ticks (one ` +
      `every ${o.stormTickMs} ms, submitted directly to the ledger, their payload the time sent); 200 sockets first ` +
      `(the gateway's modules loaded), then the storm twice: cold (the first of its size on this gateway: V8 compiles ` +
      `the start's code as it goes) and warm (once the first came and went); the clients are two processes of their own` +
      (o.stormCrowdNice === 0 ? "" : `, the crowd's at nice ${o.stormCrowdNice}`),
    preloaded: PRELOADED,
    establishedSubscribers: o.stormEstablished,
    tickEveryMs: o.stormTickMs,
    crowdNice: o.stormCrowdNice,
    points: [],
  };
  // The live ticks are another party's: the crowd reads its 3 elements and nothing more.
  let live: { party: string; ticker: { stop(): void } } | undefined;
  try {
    for (const n of o.stormSubscribers) {
      for (const crowd of o.stormCrowds) {
        const gateway = await startGatewayProcess(
          sandbox.port,
          o.stormUpgradesPerSecond === undefined
            ? []
            : ["--websocket-config.upgrades-per-second", String(o.stormUpgradesPerSecond)],
          { workers: 1, raiseFdLimit: true, nodeArgs: bench.cpuProfArgs },
        );
        const clients = {
          established: startBenchClient(true, "bench/lib/storm-client"),
          storm: startBenchClient(true, "bench/lib/storm-client"),
        };
        const bareServer = startBenchClient(true, "bench/lib/bare-storm-server");
        // The crowd's clients are other machines in a real storm: here, on the same cores, its
        // process yields to the established subscribers' (whose receipt times are the figure).
        const crowdPid = clients.storm.child.pid;
        if (o.stormCrowdNice !== 0 && crowdPid !== undefined) setPriority(crowdPid, o.stormCrowdNice);
        try {
          const under = {
            port: gateway.port,
            pid: gateway.child.pid as number,
            token: owner(0),
            metrics: async () => (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text(),
          };
          const base = `http://127.0.0.1:${gateway.port}`;
          if (live === undefined) {
            const admin = mintToken({ user: "participant_admin", secret: "bench", expiresInSeconds: 3600 });
            const liveParty = await allocateParty(base, admin, "storm-live");
            const liveToken = mintToken({
              user: `actAs-${liveParty}`,
              secret: "bench",
              expiresInSeconds: 3600,
            });
            live = {
              party: liveParty,
              ticker: startTicker(sandbox.port, liveToken, liveParty, o.stormTickMs),
            };
          }
          const url = `ws://127.0.0.1:${gateway.port}/v2/updates`;
          clients.established.send({
            kind: "established",
            url,
            token: mintToken({ user: `actAs-${live.party}`, secret: "bench", expiresInSeconds: 3600 }),
            request: updatesRequest(live.party, await ledgerEnd(base, owner(0)), undefined),
            n: o.stormEstablished,
          });
          await clients.established.next();
          const shape = {
            tokens: Array.from({ length: crowd.tokens }, (_, i) => owner(i + 1)),
            queries: stormQueries(party, Math.min(crowd.queries, STORM_QUERY_FORMS)),
            upgradesPerSecond: o.stormUpgradesPerSecond ?? 0,
          };
          // The bare reference answers every query with the first query's frames, as the gateway sent them.
          bareServer.send({ kind: "serve", frames: await firstFrames(url, owner(0), shape.queries[0]) });
          const bare = {
            port: (await bareServer.next<{ port: number }>()).port,
            pid: bareServer.child.pid as number,
          };
          say(
            `N=${n}, ${crowd.tokens} token(s), ${shape.queries.length} query(ies): 200 sockets to load the gateway's modules ...`,
          );
          const sandboxPid = sandbox.child.pid;
          await stormPoint(
            clients,
            under,
            { ...shape, subscribers: 200 },
            o.stormEstablished,
            "cold",
            sandboxPid,
          );
          await measuredStorm(clients.storm, bare, { ...shape, subscribers: 200 });
          for (const round of ["cold", "warm"] as const) {
            const point = await stormPoint(
              clients,
              under,
              { ...shape, subscribers: n },
              o.stormEstablished,
              round,
              sandboxPid,
            );
            // The reference right after, on the same crowd: within seconds, the machine as fast.
            point.bare = await measuredStorm(clients.storm, bare, { ...shape, subscribers: n });
            // A crowd too small for /proc's 10 ms ticks may read 0: no ratio then.
            if (point.bare.cpuMicrosPerStart > 0)
              point.timesBare =
                Math.round((100 * point.gatewayCpuMicrosPerStart) / point.bare.cpuMicrosPerStart) / 100;
            say(
              `N=${n}, ${crowd.tokens} token(s), ${shape.queries.length} query(ies), ${round}: ${point.gatewayCpuMicrosPerStart} µs gateway CPU per start ` +
                `(${point.grossCpuMicrosPerStart} gross; bare uWS ${point.bare.cpuMicrosPerStart}: ${point.timesBare ?? "-"}x), ${point.ledgerCallsPerStart} ledger calls per start ${JSON.stringify(point.ledgerCalls)} ` +
                `(the sandbox ${point.ledgerCores?.during ?? "-"} cores, ${point.ledgerCores?.before ?? "-"} before), ` +
                `all first elements after ${point.firstAllSeconds} s (p50 ${point.p50FirstSeconds} s), ${point.failed} failed${point.failures ? ` ${JSON.stringify(point.failures)}` : ""}${point.lostInCork ? ` (${point.lostInCork} lost in their corked upgrade)` : ""}, ` +
                `${point.refused} refused 503; established p50/p99 ${point.established.during.p50}/${point.established.during.p99} ms ` +
                `(before ${point.established.before.p50}/${point.established.before.p99} ms, ${point.established.during.count} samples), ` +
                `gateway loop lag max ${point.gatewayLoopLagMaxMs} ms`,
            );
            result.points.push(point);
          }
        } finally {
          await clients.storm.stop();
          await clients.established.stop();
          await bareServer.stop();
          await gateway.stop();
        }
      }
    }
  } finally {
    live?.ticker.stop();
    await sandbox.stop();
  }
  return result;
}

/** The ledger's end now (the established subscribers read live ticks from there). */
async function ledgerEnd(base: string, token: string): Promise<number> {
  const res = await fetch(`${base}/v2/state/ledger-end`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`ledger end: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { offset: number }).offset;
}
