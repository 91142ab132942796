/**
 * What an open /v2/updates subscriber retains in the gateway's heap, and what its start
 * allocates (issue 39: a reconnect storm's crowd is marked by every major GC, so each byte a
 * subscriber keeps raises the cost of every later start). Starts the standalone sandbox and one
 * gateway worker (its main thread, --expose-gc, its inspector on a free port), opens a warm-up
 * crowd of 200 and closes it, then opens N WebSockets from offset 0 on one token and one query
 * (bench/lib/storm-client.ts) and waits until each has its first element. Memory counts only, no
 * timing: it may run beside CPU benchmarks (under nice).
 *
 * - retained per subscriber: heapUsed after forced GCs, with the crowd open less before it, / N;
 *   and the objects in a heap snapshot with the crowd open that were not in one taken before it,
 *   by kind and constructor (closures by function, file and line), count and bytes / N;
 * - allocated per start: the sampling heap profiler over the crowd's start (objects GC collected
 *   included), / N, and by allocating function (sampled: a few % between runs).
 *
 *   npm run -s build && nice -n 19 node dist/bench/micro/subscriber-memory.js [--subscribers 2000] [--top 40] [--shapes]
 *
 * Compiled, so that the gateway is too (bench/lib/processes.ts runs it as this tool runs): under
 * tsx every function carries a name property of esbuild's, some 5 KB a subscriber more.
 */

import WebSocket from "ws";
import { mintToken } from "../../src/jwt/mint-token.js";
import { commandLine } from "../lib/command-line.js";
import { freePort } from "../lib/free-port.js";
import { startBenchClient, startGatewayProcess, startSandboxProcess } from "../lib/processes.js";
import type { StormAnswer } from "../lib/storm-client.js";
import { stormQueries } from "../rig/scenarios/storm.js";

const { values } = commandLine("micro/subscriber-memory.js", {
  subscribers: { type: "string", default: "2000" },
  top: { type: "string", default: "40" },
  shapes: { type: "boolean" },
});
const N = Number(values.subscribers);
const TOP = Number(values.top);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway's inspector: evaluations, heap snapshots, the sampling heap profiler. */
class Inspector {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  readonly #chunks: string[] = [];
  /** Script ids and their files (Debugger.scriptParsed), once `scripts` was asked. */
  readonly #scripts = new Map<string, string>();
  #id = 0;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as {
        id?: number;
        method?: string;
        params?: { chunk: string; scriptId: string; url: string };
        result?: unknown;
      };
      if (message.id !== undefined) this.#pending.get(message.id)?.(message);
      else if (message.method === "HeapProfiler.addHeapSnapshotChunk" && message.params)
        this.#chunks.push(message.params.chunk);
      else if (message.method === "Debugger.scriptParsed" && message.params)
        this.#scripts.set(message.params.scriptId, message.params.url);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    if (target === undefined) throw new Error("no inspector target");
    const socket = new WebSocket(target.webSocketDebuggerUrl, { maxPayload: 2 ** 31 });
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const inspector = new Inspector(socket);
    await inspector.call("HeapProfiler.enable");
    return inspector;
  }

  call<T = unknown>(method: string, params: object = {}): Promise<T> {
    const id = ++this.#id;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, (message) => {
        this.#pending.delete(id);
        if (message.error !== undefined) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
        else resolve(message.result as T);
      });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** heapUsed after two forced GCs. */
  async heapUsedAfterGc(): Promise<number> {
    await sleep(300);
    const answer = await this.call<{ result: { value: number } }>("Runtime.evaluate", {
      expression: "(gc(), gc(), process.memoryUsage().heapUsed)",
      returnByValue: true,
    });
    return answer.result.value;
  }

  /**
   * Every script's file by id: the debugger, enabled once the measuring is done (it tells each
   * script already parsed), then disabled.
   */
  async scripts(): Promise<Map<string, string>> {
    await this.call("Debugger.enable");
    await this.call("Debugger.disable");
    return this.#scripts;
  }

  async snapshot(): Promise<HeapSnapshot> {
    this.#chunks.length = 0;
    await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    return JSON.parse(this.#chunks.splice(0).join("")) as HeapSnapshot;
  }

  close(): void {
    this.#socket.close();
  }
}

interface HeapSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[]];
      edge_fields: string[];
      edge_types: [string[]];
      location_fields: string[];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations: number[];
}

/** The ids of a snapshot's objects. */
function idsOf(heap: HeapSnapshot): Set<number> {
  const fields = heap.snapshot.meta.node_fields;
  const id = fields.indexOf("id");
  const ids = new Set<number>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) ids.add(heap.nodes[i + id] as number);
  return ids;
}

/**
 * The objects of `after` not in `before`, by kind and name (closures by file and line):
 * [count, bytes]. With `shapes`, plain objects and contexts also by the names they hold (their
 * properties, their variables), and arrays by what holds them (its name and the property):
 * which scope, options object or list a subscriber keeps.
 */
function newObjects(
  before: Set<number>,
  after: HeapSnapshot,
  scripts: ReadonlyMap<string, string>,
  shapes = false,
): Map<string, [number, number]> {
  const { meta } = after.snapshot;
  const width = meta.node_fields.length;
  const [type, name, id, size, edgeCount] = ["type", "name", "id", "self_size", "edge_count"].map((f) =>
    meta.node_fields.indexOf(f),
  );
  const edgeWidth = meta.edge_fields.length;
  const [edgeType, edgeName] = ["type", "name_or_index"].map((f) => meta.edge_fields.indexOf(f));
  const edgeKinds = meta.edge_types[0];
  /** The names an object holds (properties, or a context's variables), sorted: its shape. */
  const shapeOf = (firstEdge: number, count: number): string => {
    const names: string[] = [];
    for (let e = firstEdge; e < firstEdge + count * edgeWidth; e += edgeWidth) {
      const kind = edgeKinds[after.edges[e + (edgeType as number)] as number];
      if (kind === "property" || kind === "context")
        names.push(after.strings[after.edges[e + (edgeName as number)] as number] as string);
    }
    return `{${names.sort().join(",").slice(0, 120)}}`;
  };
  const lines = new Map<number, string>();
  const locationWidth = meta.location_fields.length;
  for (let i = 0; i < after.locations.length; i += locationWidth) {
    const script = String(after.locations[i + 1]);
    const file = scripts.get(script)?.replace(/^.*\/(dist|node_modules)\//, "") || `script ${script}`;
    lines.set(after.locations[i] as number, `${file}:${(after.locations[i + 2] as number) + 1}`);
  }
  const kinds = meta.node_types[0];
  const found = new Map<string, [number, number]>();
  const holders = shapes ? arrayHolders(before, after) : new Map<number, string>();
  let firstEdge = 0;
  for (let i = 0; i < after.nodes.length; i += width) {
    const edges = after.nodes[i + (edgeCount as number)] as number;
    const edgesFrom = firstEdge;
    firstEdge += edges * edgeWidth;
    if (before.has(after.nodes[i + (id as number)] as number)) continue;
    const kind = kinds[after.nodes[i + (type as number)] as number] as string;
    const named = after.strings[after.nodes[i + (name as number)] as number] as string;
    const shaped = shapes && (named === "Object" || named === "system / Context");
    const key =
      kind === "closure"
        ? `closure ${named || "(anonymous)"} (${lines.get(i) ?? "?"})`
        : kind.includes("string")
          ? kind
          : `${kind} ${named.slice(0, 60)}${shaped ? ` ${shapeOf(edgesFrom, edges)}` : ""}${holders.has(i) ? ` held by ${holders.get(i)}` : ""}`;
    const entry = found.get(key) ?? [0, 0];
    entry[0] += 1;
    entry[1] += after.nodes[i + (size as number)] as number;
    found.set(key, entry);
  }
  return found;
}

/**
 * The new arrays of `after` (by node index), each with its first holder: `Name.property`; the
 * elements of a JS Array are named by what holds that Array.
 */
function arrayHolders(before: Set<number>, after: HeapSnapshot): Map<number, string> {
  const { meta } = after.snapshot;
  const width = meta.node_fields.length;
  const [type, name, id, edgeCount] = ["type", "name", "id", "edge_count"].map((f) =>
    meta.node_fields.indexOf(f),
  );
  const edgeWidth = meta.edge_fields.length;
  const [edgeType, edgeName, toNode] = ["type", "name_or_index", "to_node"].map((f) =>
    meta.edge_fields.indexOf(f),
  );
  const kinds = meta.node_types[0];
  const edgeKinds = meta.edge_types[0];
  const nameOf = (node: number) => after.strings[after.nodes[node + (name as number)] as number] as string;
  // Every node's first strong holder: its node index and the edge's name.
  const holderOf = new Map<number, [number, string]>();
  let edge = 0;
  for (let i = 0; i < after.nodes.length; i += width) {
    const edges = after.nodes[i + (edgeCount as number)] as number;
    for (let e = edge; e < edge + edges * edgeWidth; e += edgeWidth) {
      const target = after.edges[e + (toNode as number)] as number;
      const kind = edgeKinds[after.edges[e + (edgeType as number)] as number];
      if (holderOf.has(target) || kind === "weak") continue;
      const via = after.edges[e + (edgeName as number)] as number;
      holderOf.set(target, [
        i,
        kind === "element" || kind === "hidden" ? `[${via}]` : (after.strings[via] as string),
      ]);
    }
    edge += edges * edgeWidth;
  }
  const holders = new Map<number, string>();
  for (let i = 0; i < after.nodes.length; i += width) {
    if (kinds[after.nodes[i + (type as number)] as number] !== "array") continue;
    if (before.has(after.nodes[i + (id as number)] as number)) continue;
    let holder = holderOf.get(i);
    // A JS Array's elements: say what holds the Array.
    if (holder !== undefined && nameOf(holder[0]) === "Array") holder = holderOf.get(holder[0]) ?? holder;
    if (holder !== undefined) holders.set(i, `${nameOf(holder[0]).slice(0, 40)}.${holder[1]}`);
  }
  return holders;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Sampled allocation bytes by function (name, file, line). */
function allocationsByFunction(head: SamplingNode): Map<string, number> {
  const byFunction = new Map<string, number>();
  const walk = (node: SamplingNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*\/(dist|node_modules)\//, "$1/");
    const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    if (node.selfSize > 0) byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(head);
  return byFunction;
}

const perSubscriber = (bytes: number) => Math.round(bytes / N);

const sandbox = await startSandboxProcess(3, 100, 1);
const inspectPort = await freePort();
const gateway = await startGatewayProcess(sandbox.port, [], {
  workers: 1,
  raiseFdLimit: true,
  nodeArgs: ["--expose-gc", `--inspect=127.0.0.1:${inspectPort}`],
});
const client = startBenchClient(true, "bench/lib/storm-client");
const inspector = await Inspector.connect(inspectPort);
try {
  const token = mintToken({ user: `actAs-${sandbox.tickParty}`, secret: "bench", expiresInSeconds: 3600 });
  const job = {
    kind: "storm",
    url: `ws://127.0.0.1:${gateway.port}/v2/updates`,
    tokens: [token],
    requests: stormQueries(sandbox.tickParty, 1),
  };
  client.send({ ...job, n: 200 });
  await client.next<StormAnswer>();
  client.send({ kind: "close" });
  await client.next();
  await sleep(1000);
  const before = idsOf(await inspector.snapshot());
  const usedBefore = await inspector.heapUsedAfterGc();
  await inspector.call("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  client.send({ ...job, n: N });
  const storm = await client.next<StormAnswer>();
  const { profile } = await inspector.call<{ profile: { head: SamplingNode } }>("HeapProfiler.stopSampling");
  await sleep(1000);
  const usedAfter = await inspector.heapUsedAfterGc();
  const snapshot = await inspector.snapshot();
  const found = newObjects(before, snapshot, await inspector.scripts(), values.shapes === true);
  const allocations = allocationsByFunction(profile.head);

  let count = 0;
  let bytes = 0;
  for (const [n, b] of found.values()) {
    count += n;
    bytes += b;
  }
  let allocated = 0;
  for (const b of allocations.values()) allocated += b;
  console.log(
    `${N} subscribers on /v2/updates (${storm.opened} with their first element, ${storm.failed} failed)`,
  );
  console.log(`retained per subscriber: ${perSubscriber(usedAfter - usedBefore)} B (heapUsed after GC)`);
  console.log(
    `new objects per subscriber: ${(count / N).toFixed(1)}, ${perSubscriber(bytes)} B (snapshot difference); the largest:`,
  );
  for (const [key, [n, b]] of [...found].sort((x, y) => y[1][1] - x[1][1]).slice(0, TOP))
    console.log(`  ${String(perSubscriber(b)).padStart(6)} B  ${(n / N).toFixed(2).padStart(6)} x  ${key}`);
  console.log(`allocated per start: ${perSubscriber(allocated)} B (sampled); by function:`);
  for (const [key, b] of [...allocations].sort((x, y) => y[1] - x[1]).slice(0, TOP))
    console.log(`  ${String(perSubscriber(b)).padStart(6)} B  ${key}`);
  client.send({ kind: "close" });
  await client.next();
} finally {
  inspector.close();
  await client.stop();
  await gateway.stop();
  await sandbox.stop();
}
