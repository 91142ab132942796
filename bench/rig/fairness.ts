import { mintToken } from "../../src/jwt/mint-token.js";
import { startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { LocalBench } from "./ledger.js";
import {
  allocateParty,
  capArgs,
  FAIRNESS_CAPS,
  type FairnessResult,
  fairnessRun,
} from "./scenarios/fairness.js";

/**
 * fairness (issue 24): a small sandbox of its own, a gateway per `--fairness-caps` setting, two
 * users with a party each: one user's flood against the other's paced load
 * (bench/rig/scenarios/fairness.ts says what and why).
 */
export async function fairness(bench: LocalBench): Promise<FairnessResult | undefined> {
  const o = bench.options;
  if (!o.scenarios.has("fairness")) return undefined;
  const say = bench.progress("fairness");
  say("starting the sandbox, preloading 1000 ticks ...");
  const sandbox = await startSandboxProcess(1000, o.payloadBytes, 1);
  const admin = mintToken({ user: "participant_admin", secret: "bench", expiresInSeconds: 3600 });
  const result: FairnessResult = {
    scenario:
      `user B: submit-and-wait from ${o.fairnessVictimConcurrency} loops paced to ${o.fairnessVictimRate} commands/s and ` +
      `one WebSocket on its party's updates; user A (a process of its own): submit-and-wait from ` +
      `${o.floodConcurrency} loops back to back (a 429 retried at once) and ${o.floodSockets} ` +
      `WebSockets with an update stream each, reopened when closed` +
      (o.floodNice === 0 ? "" : `, at nice ${o.floodNice}`) +
      `; B measured unloaded then flooded ${o.fairnessRounds} time(s), then unloaded again, ` +
      `${o.fairnessSeconds} s each, after a flooded warm-up window; figures compared as medians; one gateway worker`,
    seconds: o.fairnessSeconds,
    rounds: o.fairnessRounds,
    victim: {
      concurrency: o.fairnessVictimConcurrency,
      commandsPerSecond: o.fairnessVictimRate,
      webSockets: 1,
    },
    flood: { concurrency: o.floodConcurrency, webSockets: o.floodSockets, nice: o.floodNice },
    caps: FAIRNESS_CAPS,
    runs: [],
  };
  try {
    let parties: { victim: string; flood: string } | undefined;
    for (const caps of o.fairnessCaps) {
      const args = caps === "on" ? capArgs() : [];
      const gateway = await startGatewayProcess(sandbox.port, args, {
        raiseFdLimit: true,
        nodeArgs: bench.cpuProfArgs,
      });
      try {
        const base = `http://127.0.0.1:${gateway.port}`;
        parties ??= {
          victim: await allocateParty(base, admin, "fair-victim"),
          flood: await allocateParty(base, admin, "fair-flood"),
        };
        const token = (party: string) =>
          mintToken({ user: `actAs-${party}`, secret: "bench", expiresInSeconds: 3600 });
        result.runs.push(
          await fairnessRun(
            {
              base,
              gatewayPid: gateway.child.pid as number,
              sandboxPid: sandbox.child.pid as number,
              victim: { party: parties.victim, token: token(parties.victim) },
              flood: { party: parties.flood, token: token(parties.flood) },
              seconds: o.fairnessSeconds,
              rounds: o.fairnessRounds,
              victimConcurrency: result.victim.concurrency,
              victimRate: o.fairnessVictimRate,
              floodConcurrency: result.flood.concurrency,
              floodSockets: result.flood.webSockets,
              floodNice: result.flood.nice,
              progress: say,
            },
            caps,
            args,
          ),
        );
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    await sandbox.stop();
  }
  return result;
}
