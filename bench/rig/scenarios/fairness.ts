import { setPriority } from "node:os";
import WebSocket from "ws";
import type { FloodJob, FloodReport } from "../../lib/flood-client.js";
import { BenchHttpClient } from "../../lib/http-client.js";
import { processCpuSeconds } from "../../lib/proc-stats.js";
import { startBenchClient } from "../../lib/processes.js";
import { percentile, round, secondsSince } from "../../lib/stats.js";
import { tickCommands } from "../../lib/tick-commands.js";
import { updatesRequest } from "./fanout.js";

/**
 * Issue 24's "fair under load": one gateway, two users with a party each. The victim (user B)
 * submits and waits in a closed loop of `victimConcurrency` paced to `victimRate` commands/s, and
 * reads its own party's updates on one WebSocket; the flood (user A, a process of its own:
 * bench/lib/flood-client.ts) submits and waits from `floodConcurrency` loops as fast as it is
 * answered, a 429 retried at once, and keeps `floodSockets` WebSockets with an update stream
 * each, reopened as soon as they are closed. B is measured unloaded then under the flood, `rounds`
 * times, then unloaded again, each window `seconds` long, and the medians compared (on a shared
 * machine one window's p99 is noise); with the caps on and, to show what they buy, off.
 *
 * B is paced because a user that a per-user cap must not touch is one that stays under it: an
 * unpaced closed loop runs as fast as the machine lets it, and a commands cap meant for the
 * flood would cap it too. Its p99 and its stream's deliveries/s are what the target compares.
 */

/**
 * The caps a deployment would set against a noisy user, for a victim of 100 commands/s at
 * concurrency 2 with one WebSocket. Each is twice or more what that user needs, so that it never
 * refuses B, and far under what the flood asks for, so that it bites A.
 */
export const FAIRNESS_CAPS: Record<string, { value: number; why: string }> = {
  "limits.commands-per-second-per-user": {
    value: 200,
    why: "2x the victim's 100/s: a user's fair share of a participant that commits some 1,000-2,000 commands/s here",
  },
  "limits.commands-burst-per-user": {
    value: 400,
    why: "2 s at that rate: a client catching up after a pause is not refused",
  },
  "limits.http-in-flight-per-user": {
    value: 8,
    why: "4x the victim's 2 requests at once; the flood's 64 loops hold at most 8 of the gateway's and ledger's slots",
  },
  "limits.ws-connections-per-user": {
    value: 4,
    why: "4x the victim's one socket",
  },
  "limits.streams-per-user": {
    value: 4,
    why: "as many streams as sockets: each socket has one subscription",
  },
};

export const capArgs = (): string[] =>
  Object.entries(FAIRNESS_CAPS).flatMap(([key, { value }]) => [`--${key}`, String(value)]);

/** What the victim saw in one window. */
interface VictimFigures {
  seconds: number;
  commands: number;
  /** Answers other than 200 (a cap refusing the victim would show here). */
  refused: number;
  commandsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Transactions of B's party delivered on its WebSocket during the window, per second. */
  deliveriesPerSecond: number;
  /** From the submit's start to the transaction's frame on B's stream. */
  streamLagP50Ms: number;
  streamLagP99Ms: number;
}

interface FairnessWindow {
  load: "unloaded" | "flooded" | "unloaded again";
  victim: VictimFigures;
  /** The flood's answers in the same window (flooded windows only). */
  flood?: FloodReport;
  /** CPU seconds (user + system) of each process over the window. */
  cpuSeconds: { gateway: number; sandbox: number; victim: number; flood?: number };
}

export interface FairnessRun {
  caps: "on" | "off";
  gatewayArgs: string[];
  windows: FairnessWindow[];
  /**
   * The median of the flooded windows' figures / the median of the unloaded ones' (the last
   * unloaded window included): p99 (lower is better), p50, commands/s and deliveries/s.
   */
  ratios: Ratios;
  /** Each round's flooded window / the unloaded window before it: the spread, seen. */
  roundRatios: Ratios[];
  /** p99 at most 1.2x, deliveries/s at least 0.8x of unloaded (medians). */
  met: boolean;
}

interface Ratios {
  p99: number;
  p50: number;
  commandsPerSecond: number;
  deliveriesPerSecond: number;
}

export interface FairnessSetup {
  base: string;
  gatewayPid: number;
  sandboxPid: number;
  victim: { party: string; token: string };
  flood: { party: string; token: string };
  seconds: number;
  /** Unloaded then flooded windows, this many times, then an unloaded one. */
  rounds: number;
  victimConcurrency: number;
  victimRate: number;
  floodConcurrency: number;
  floodSockets: number;
  /**
   * The flood process's nice value (0: as the others). 19 stands for a flood whose client runs on
   * another machine: its own CPU then yields to the gateway, the ledger and the victim.
   */
  floodNice: number;
  progress: (line: string) => void;
}

export const FAIRNESS_TARGET = 0.2;

/** The median; of an even count, the mean of the two in the middle. */
function middle(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[half] as number)
    : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
}

/** A party allocated through the gateway with an admin token; B's and A's tokens act as it. */
export async function allocateParty(base: string, adminToken: string, hint: string): Promise<string> {
  const res = await fetch(`${base}/v2/parties`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ partyIdHint: hint, identityProviderId: "" }),
  });
  if (res.status !== 200) throw new Error(`allocating ${hint}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { partyDetails: { party: string } }).partyDetails.party;
}

/** What the results file holds under `fairness`. */
export interface FairnessResult {
  scenario: string;
  seconds: number;
  rounds: number;
  victim: { concurrency: number; commandsPerSecond: number; webSockets: number };
  flood: { concurrency: number; webSockets: number; nice: number };
  caps: typeof FAIRNESS_CAPS;
  runs: FairnessRun[];
}

/** B's WebSocket on its own party's updates, from the ledger end, open for the whole run. */
class VictimStream {
  private deliveries = 0;
  private readonly lags: number[] = [];
  readonly submitted = new Map<string, bigint>();

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      if (!data.includes('"Transaction"')) return;
      this.deliveries++;
      const id = /"commandId":"([^"]+)"/.exec(data.toString("utf8"))?.[1];
      const sent = id === undefined ? undefined : this.submitted.get(id);
      if (id !== undefined && sent !== undefined) {
        this.submitted.delete(id);
        this.lags.push(secondsSince(sent) * 1000);
      }
    });
  }

  static async open(base: string, token: string, party: string): Promise<VictimStream> {
    const end = (await (
      await fetch(`${base}/v2/state/ledger-end`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { offset: number };
    const socket = new WebSocket(
      `${base.replace(/^http/, "ws")}/v2/updates`,
      ["daml.ws.auth", `jwt.token.${token}`],
      { perMessageDeflate: false },
    );
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    socket.send(JSON.stringify(updatesRequest(party, end.offset, undefined)));
    return new VictimStream(socket);
  }

  /** Deliveries and lags since the last take. */
  take(): { deliveries: number; lags: number[] } {
    const taken = { deliveries: this.deliveries, lags: this.lags.splice(0) };
    this.deliveries = 0;
    return taken;
  }

  close(): void {
    this.socket.close(1000);
  }
}

/** B's paced closed loop for `seconds`; its stream's deliveries over the same window. */
async function victimWindow(
  setup: FairnessSetup,
  http: BenchHttpClient,
  stream: VictimStream,
  label: string,
): Promise<VictimFigures> {
  const interval = BigInt(Math.round((setup.victimConcurrency / setup.victimRate) * 1e9));
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(setup.seconds * 1e9));
  const latencies: number[] = [];
  let refused = 0;
  stream.take();
  await Promise.all(
    Array.from({ length: setup.victimConcurrency }, async (_, loop) => {
      let i = 0;
      // The loops staggered over the interval, so that B's commands are spread as a paced client's.
      const first = started + (interval * BigInt(loop)) / BigInt(setup.victimConcurrency);
      for (let next = first; next < until; next += interval) {
        const wait = Number(next - process.hrtime.bigint()) / 1e6;
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const commandId = `fair-victim-${label}-${loop}-${i++}-${Date.now()}`;
        const t0 = process.hrtime.bigint();
        stream.submitted.set(commandId, t0);
        const answer = await http.request("/v2/commands/submit-and-wait", {
          token: setup.victim.token,
          body: JSON.stringify(tickCommands(commandId, setup.victim.party, i)),
        });
        latencies.push(secondsSince(t0) * 1000);
        if (answer.status !== 200) {
          refused++;
          stream.submitted.delete(commandId);
        }
        // Behind its pace (a slow answer): start again from now, as a closed loop does.
        const now = process.hrtime.bigint();
        if (next + interval < now) next = now - interval;
      }
    }),
  );
  const seconds = secondsSince(started);
  const { deliveries, lags } = stream.take();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  return {
    seconds: round(seconds),
    commands: latencies.length,
    refused,
    commandsPerSecond: round(latencies.length / seconds, 1),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    deliveriesPerSecond: round(deliveries / seconds, 1),
    streamLagP50Ms: round(percentile(lags, 50)),
    streamLagP99Ms: round(percentile(lags, 99)),
  };
}

const victimCpuSeconds = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

/** One window: B measured, with A's flood running in its own process when `flooded`. */
async function window(
  setup: FairnessSetup,
  http: BenchHttpClient,
  stream: VictimStream,
  load: FairnessWindow["load"],
): Promise<FairnessWindow> {
  const flood = load === "flooded" ? startBenchClient(true, "bench/lib/flood-client") : undefined;
  const floodPid = flood?.child.pid;
  if (flood) {
    if (setup.floodNice !== 0 && floodPid !== undefined) setPriority(floodPid, setup.floodNice);
    const job: FloodJob = {
      base: setup.base,
      token: setup.flood.token,
      party: setup.flood.party,
      concurrency: setup.floodConcurrency,
      sockets: setup.floodSockets,
      updatesRequest: updatesRequest(setup.flood.party, 0, undefined),
    };
    flood.send(job);
    await flood.next<{ started: true }>();
    // A second of flood before the window, so that B is measured under it, not at its start.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    flood.send("mark");
    await flood.next<{ marked: true }>();
  }
  const cpu = () => ({
    gateway: processCpuSeconds(setup.gatewayPid),
    sandbox: processCpuSeconds(setup.sandboxPid),
    victim: victimCpuSeconds(),
    flood: floodPid === undefined ? 0 : processCpuSeconds(floodPid),
  });
  const before = cpu();
  const victim = await victimWindow(setup, http, stream, load.replace(" ", "-"));
  const after = cpu();
  let report: FloodReport | undefined;
  if (flood) {
    flood.send("stop");
    report = await flood.next<FloodReport>();
    await flood.stop();
  }
  const spent = (key: keyof typeof before) => round(after[key] - before[key]);
  return {
    load,
    victim,
    ...(report && { flood: report }),
    cpuSeconds: {
      gateway: spent("gateway"),
      sandbox: spent("sandbox"),
      victim: spent("victim"),
      ...(flood && { flood: spent("flood") }),
    },
  };
}

/** Unloaded, flooded, unloaded again on one gateway; `caps` says which one it is. */
export async function fairnessRun(
  setup: FairnessSetup,
  caps: FairnessRun["caps"],
  gatewayArgs: string[],
): Promise<FairnessRun> {
  const http = new BenchHttpClient(setup.base, setup.victimConcurrency);
  const stream = await VictimStream.open(setup.base, setup.victim.token, setup.victim.party);
  try {
    // Warm-up: the gateway's hot paths optimized (a fresh one costs some 4x more per command
    // over its first few thousand), by one flooded window that is not kept.
    setup.progress(`caps ${caps}: warm-up (a flooded window, not kept) ...`);
    await window(setup, http, stream, "flooded");
    const windows: FairnessWindow[] = [];
    const loads = [
      ...Array.from({ length: setup.rounds }, () => ["unloaded", "flooded"] as const).flat(),
      "unloaded again" as const,
    ];
    for (const load of loads) {
      setup.progress(`caps ${caps}: ${load}, ${setup.seconds} s ...`);
      const w = await window(setup, http, stream, load);
      const v = w.victim;
      setup.progress(
        `caps ${caps} ${load}: B ${v.commandsPerSecond} commands/s, p50 ${v.p50Ms} ms, p99 ${v.p99Ms} ms, ` +
          `${v.deliveriesPerSecond} deliveries/s (lag p99 ${v.streamLagP99Ms} ms), ${v.refused} refused; ` +
          (w.flood
            ? `A's submit answers ${JSON.stringify(w.flood.submitAnswers)}, sockets opened ${w.flood.webSockets.opened}, ` +
              `closes ${JSON.stringify(w.flood.webSockets.closes)}; `
            : "") +
          `CPU s ${JSON.stringify(w.cpuSeconds)}`,
      );
      windows.push(w);
    }
    const ratio = (a: number, b: number) => round(a / b, 3);
    const ratiosOf = (flooded: VictimFigures, unloaded: VictimFigures): Ratios => ({
      p99: ratio(flooded.p99Ms, unloaded.p99Ms),
      p50: ratio(flooded.p50Ms, unloaded.p50Ms),
      commandsPerSecond: ratio(flooded.commandsPerSecond, unloaded.commandsPerSecond),
      deliveriesPerSecond: ratio(flooded.deliveriesPerSecond, unloaded.deliveriesPerSecond),
    });
    const medianOf = (load: "flooded" | "unloaded"): VictimFigures => {
      const of = windows.filter((w) => (load === "flooded") === (w.load === "flooded")).map((w) => w.victim);
      const mid = (pick: (v: VictimFigures) => number) => middle(of.map(pick));
      return {
        ...(of[0] as VictimFigures),
        p99Ms: mid((v) => v.p99Ms),
        p50Ms: mid((v) => v.p50Ms),
        commandsPerSecond: mid((v) => v.commandsPerSecond),
        deliveriesPerSecond: mid((v) => v.deliveriesPerSecond),
      };
    };
    const ratios = ratiosOf(medianOf("flooded"), medianOf("unloaded"));
    const roundRatios = windows.flatMap((w, i) => {
      const before = windows[i - 1];
      return w.load === "flooded" && before ? [ratiosOf(w.victim, before.victim)] : [];
    });
    return {
      caps,
      gatewayArgs,
      windows,
      ratios,
      roundRatios,
      met: ratios.p99 <= 1 + FAIRNESS_TARGET && ratios.deliveriesPerSecond >= 1 - FAIRNESS_TARGET,
    };
  } finally {
    stream.close();
    http.close();
  }
}
