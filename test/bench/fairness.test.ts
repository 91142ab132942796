import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type Running,
  type RunningSandbox,
  startGatewayProcess,
  startSandboxProcess,
} from "../../bench/lib/processes.js";
import { allocateParty, capArgs, type FairnessRun, fairnessRun } from "../../bench/rig/scenarios/fairness.js";
import { mintToken } from "../../src/jwt/mint-token.js";

/**
 * The fairness scenario (bench/rig/scenarios/fairness.ts) run briefly over real processes: its
 * structure only, never its timings (those are the bench's, in docs/performance.md).
 */
describe("the fairness bench scenario", () => {
  let sandbox: RunningSandbox;
  let gateway: Running;
  let run: FairnessRun;

  before(async () => {
    sandbox = await startSandboxProcess(10, 64, 1);
    gateway = await startGatewayProcess(sandbox.port, capArgs());
    const base = `http://127.0.0.1:${gateway.port}`;
    const admin = mintToken({ user: "participant_admin", secret: "test", expiresInSeconds: 600 });
    const user = async (hint: string) => {
      const party = await allocateParty(base, admin, hint);
      return { party, token: mintToken({ user: `actAs-${party}`, secret: "test", expiresInSeconds: 600 }) };
    };
    run = await fairnessRun(
      {
        base,
        gatewayPid: gateway.child.pid as number,
        sandboxPid: sandbox.child.pid as number,
        victim: await user("victim"),
        flood: await user("flood"),
        seconds: 1,
        rounds: 1,
        victimConcurrency: 2,
        victimRate: 50,
        floodConcurrency: 16,
        floodSockets: 8,
        floodNice: 0,
        progress: () => undefined,
      },
      "on",
      capArgs(),
    );
  });
  after(async () => {
    await gateway?.stop();
    await sandbox?.stop();
  });

  it("measures the victim unloaded, flooded and unloaded again, with its stream's deliveries, and never refuses it", () => {
    assert.deepEqual(
      run.windows.map((w) => w.load),
      ["unloaded", "flooded", "unloaded again"],
    );
    for (const w of run.windows) {
      assert.ok(w.victim.commands > 0, `${w.load}: commands`);
      assert.equal(w.victim.refused, 0, `${w.load}: the caps leave the victim alone`);
      assert.ok(w.victim.deliveriesPerSecond > 0, `${w.load}: deliveries on the victim's stream`);
      assert.ok(w.cpuSeconds.gateway >= 0 && w.cpuSeconds.sandbox >= 0);
    }
    assert.equal(typeof run.ratios.p99, "number");
    assert.equal(run.roundRatios.length, 1);
    assert.equal(typeof run.met, "boolean");
  });

  it("floods from another user only in the flooded window, whose submits and sockets past the caps are refused (429, 1013)", () => {
    const [unloaded, flooded, again] = run.windows;
    assert.equal(unloaded?.flood, undefined);
    assert.equal(again?.flood, undefined);
    const flood = flooded?.flood;
    assert.ok(flood);
    assert.ok((flood.submitAnswers["429"] ?? 0) > 0, JSON.stringify(flood.submitAnswers));
    assert.ok((flood.webSockets.closes["1013"] ?? 0) > 0, JSON.stringify(flood.webSockets));
    assert.ok(flooded?.cpuSeconds.flood !== undefined);
  });
});
