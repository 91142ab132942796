import { type FuzzCase, type FuzzContext, fuzzCase } from "./cases.js";
import { type CaseResult, type ExecuteOptions, execute } from "./execute.js";

/** One failed case, as the findings file and the test report it. */
export interface Finding {
  seed: number;
  index: number;
  category: string;
  label: string;
  request: string;
  answer: string;
  failure: string;
  detail?: string;
}

export interface RunFigures {
  seed: number;
  cases: number;
  http: number;
  ws: number;
  /** Cases per answer: HTTP status, `ws <close code>`, `timeout`, `closed`. */
  answers: Record<string, number>;
  /** Cases per category (body, path, query, headers, token, method, request-line, ws, valid). */
  categories: Record<string, number>;
  /** Slowest answer, ms. */
  slowestMs: number;
  wallSeconds: number;
  failures: Finding[];
}

export interface RunOptions {
  seed: number;
  count: number;
  /** First case index (a soak continues where the bounded run stopped, or replays one case). */
  first?: number;
  concurrency: number;
  ctx: FuzzContext;
  execution: ExecuteOptions;
  /** Called after each case (progress, RSS sampling). */
  after?: (c: FuzzCase, result: CaseResult, done: number) => void;
  /** The ledger process, watched: a case that kills it is a finding of its own. */
  ledger?: WatchedLedger;
}

export interface WatchedLedger {
  alive(): boolean;
  /** Its last words (stderr). */
  output(): string;
  /** A new ledger on its port with the fuzzer's names set up again; without it the run stops. */
  revive?(): Promise<void>;
}

/** A failure that a dead ledger explains: the gateway saying the ledger is unavailable. */
const LEDGER_GONE = /\b503\b|UNAVAILABLE|gRPC 14/;

/** The finding of a ledger that died while `cases` were in flight (one of them killed it). */
export function crashFinding(seed: number, cases: readonly FuzzCase[], output: string): Finding {
  const first = Math.min(...cases.map((c) => c.index));
  const cause = /^\w*Error\b.*$/m.exec(output)?.[0] ?? "no error on its stderr";
  return {
    seed,
    index: first,
    category: "ledger-crash",
    label: `the ledger died while cases ${cases.map((c) => c.index).join(", ")} were in flight`,
    request: cases.map((c) => `#${c.index} ${c.label}: ${describeCase(c)}`).join("\n    "),
    answer: "ledger exited",
    failure: `the ledger process died: ${cause}`,
    detail: output.slice(-1500),
  };
}

export async function runFuzz(options: RunOptions): Promise<RunFigures> {
  const started = performance.now();
  const first = options.first ?? 0;
  const figures: RunFigures = {
    seed: options.seed,
    cases: 0,
    http: 0,
    ws: 0,
    answers: {},
    categories: {},
    slowestMs: 0,
    wallSeconds: 0,
    failures: [],
  };
  let next = first;
  let stopped = false;
  /** Bumped at each death of the ledger: a case that saw another generation end is its casualty. */
  let generation = 0;
  let reviving: Promise<void> | undefined;
  const inFlight = new Set<FuzzCase>();
  const ledger = options.ledger;
  const ledgerDied = async (seen: number): Promise<boolean> => {
    if (ledger === undefined) return false;
    if (generation !== seen) return true;
    if (ledger.alive()) return false;
    generation++;
    figures.failures.push(crashFinding(options.seed, [...inFlight], ledger.output()));
    if (ledger.revive === undefined) stopped = true;
    else reviving = ledger.revive();
    return true;
  };
  const worker = async () => {
    while (next < first + options.count && !stopped) {
      if (reviving !== undefined) await reviving;
      const index = next++;
      const seen = generation;
      const c = fuzzCase(options.seed, index, options.ctx);
      inFlight.add(c);
      const result = await execute(c, options.execution);
      // The ledger's exit may reach us just after the gateway's 503: look again before judging.
      if (result.failure !== undefined && LEDGER_GONE.test(`${result.failure} ${result.answer}`))
        await new Promise((resolve) => setTimeout(resolve, 500));
      const casualty = await ledgerDied(seen);
      inFlight.delete(c);
      figures.cases++;
      figures[c.kind]++;
      figures.answers[result.answer] = (figures.answers[result.answer] ?? 0) + 1;
      figures.categories[c.category] = (figures.categories[c.category] ?? 0) + 1;
      figures.slowestMs = Math.max(figures.slowestMs, Math.round(result.ms));
      const finding = findingOf(options.seed, c, result);
      if (finding !== undefined && !casualty) figures.failures.push(finding);
      options.after?.(c, result, figures.cases);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  figures.failures.sort((a, b) => a.index - b.index);
  figures.wallSeconds = Math.round((performance.now() - started) / 100) / 10;
  return figures;
}

/** The finding of a failed case; undefined when it passed. */
export function findingOf(seed: number, c: FuzzCase, result: CaseResult): Finding | undefined {
  if (result.failure === undefined) return undefined;
  return {
    seed,
    index: c.index,
    category: c.category,
    label: c.label,
    request: describeCase(c),
    answer: result.answer,
    failure: result.failure,
    ...(result.detail !== undefined ? { detail: result.detail } : {}),
  };
}

function short(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}...(${text.length} chars)` : text;
}

/** Tokens stay out of the text (they are replayable from seed and index). */
function redact(text: string): string {
  return text.replace(
    /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.?[A-Za-z0-9_-]*/g,
    (jwt) => `<JWT ${jwt.length} chars>`,
  );
}

/** The request of a case in a few lines: enough to read; the seed and index replay it exactly. */
export function describeCase(c: FuzzCase): string {
  if (c.kind === "ws") {
    const frames = c.frames.map((f) =>
      f.binary ? `<binary ${f.data.length} bytes>` : short(redact(String(f.data)), 200),
    );
    return redact(
      `WS ${c.path} protocols=${JSON.stringify(c.protocols.map((p) => short(redact(p), 80)))} frames(${frames.length})=${JSON.stringify(frames.slice(0, 3))}${c.garbage ? ` then raw bytes ${c.garbage.toString("hex")}` : ""}`,
    );
  }
  const { request } = c;
  if (request.raw !== undefined)
    return redact(`raw ${JSON.stringify(short(request.raw.toString("latin1"), 300))}`);
  const headers = request.headers.map(([name, value]) => `${name}: ${short(redact(value), 80)}`).join(" | ");
  const body =
    request.body === undefined
      ? ""
      : ` body(${request.body.length} bytes)=${JSON.stringify(short(request.body.toString("utf8"), 300))}`;
  return redact(`${request.method} ${short(request.target, 200)} [${headers}]${body}`);
}
