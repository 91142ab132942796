import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { projectRoot } from "../../src/proto/project-root.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";

/**
 * Canton's published JSON Ledger API examples, replayed against a fresh gateway with its
 * embedded sandbox (the defaults `make run` uses, on ephemeral ports). Each pair in
 * canton-examples.json names where it comes from. Field names and shapes must match exactly;
 * values where they are deterministic, ids, offsets and timestamps by pattern.
 *
 * Every difference fails the suite unless it is listed in KNOWN_OPEN_DIFFERENCES, and a listed
 * difference that no longer occurs fails it too: fixing one means removing its entry.
 */

interface Pair {
  readonly name: string;
  readonly source: string;
  readonly setup?: boolean;
  readonly user?: string;
  readonly request: { method: string; path: string; body?: unknown };
  readonly response: { status: number; body?: unknown; protocol?: string };
  readonly capture?: Record<string, string | { path: string; pattern: string }>;
}

/** A difference: the pair, where (`status`, `protocol`, or `body.<path>`), and what. */
interface Difference {
  readonly pair: string;
  readonly at: string;
  readonly what: string;
}

/** Open items of issue 15: each entry must still occur; remove it with the fix. */
const KNOWN_OPEN_DIFFERENCES: readonly (Omit<Difference, "what"> & { issue: string })[] = [];

const PAIRS = (
  JSON.parse(readFileSync(join(projectRoot(), "test/golden/canton-examples.json"), "utf8")) as {
    pairs: Pair[];
  }
).pairs;

const MATCHERS: Record<string, (v: unknown) => boolean> = {
  party: (v) => typeof v === "string" && /^[A-Za-z0-9_:-]+::1220[0-9a-f]{64}$/.test(v),
  updateId: (v) => typeof v === "string" && /^[0-9a-f]{2,}$/.test(v),
  contractId: (v) => typeof v === "string" && /^00[0-9a-f]+$/.test(v),
  offset: (v) => Number.isSafeInteger(v) && (v as number) > 0,
  packageId: (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v),
  timestamp: (v) => typeof v === "string" && !Number.isNaN(Date.parse(v)) && v.endsWith("Z"),
  string: (v) => typeof v === "string",
  int: (v) => Number.isInteger(v),
  "boolean|null": (v) => v === null || typeof v === "boolean",
  "string|null": (v) => v === null || typeof v === "string",
  array: (v) => Array.isArray(v),
  any: (v) => v !== undefined,
};
const MATCHER = /<<([a-zA-Z|]+)>>/g;

/** Replaces `${NAME}` by captured values; a string that is one whole `${NAME}` takes its type. */
function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === "string") {
    const whole = /^\$\{([A-Z_]+)\}$/.exec(value);
    if (whole) return vars[whole[1]!];
    return value.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => String(vars[name]));
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** Matches a string against an expected one holding `<<matcher>>` parts (each part by its pattern). */
function matchesTemplate(expected: string, actual: unknown): boolean {
  const whole = /^<<([a-zA-Z|]+)>>$/.exec(expected);
  if (whole) return MATCHERS[whole[1]!]!(actual);
  if (typeof actual !== "string") return false;
  const parts = expected.split(MATCHER);
  const regex = parts
    .map((part, i) => (i % 2 === 1 ? "(.+?)" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  const found = new RegExp(`^${regex}$`).exec(actual);
  if (!found) return false;
  return parts.every((part, i) => i % 2 === 0 || MATCHERS[part]!(found[(i + 1) / 2]));
}

type Report = (at: string, what: string) => undefined;

function compare(expected: unknown, actual: unknown, at: string, out: Report): undefined {
  if (typeof expected === "string" && expected.includes("<<")) {
    if (!matchesTemplate(expected, actual)) out(at, `expected ${expected}, got ${JSON.stringify(actual)}`);
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return out(at, `expected an array, got ${JSON.stringify(actual)}`);
    if (expected.length !== actual.length)
      return out(at, `expected ${expected.length} elements, got ${actual.length}`);
    for (const [i, e] of expected.entries()) compare(e, actual[i], `${at}.${i}`, out);
    return;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual))
      return out(at, `expected an object, got ${JSON.stringify(actual)}`);
    const open = (expected as Record<string, unknown>)["..."] === true;
    for (const [key, value] of Object.entries(expected)) {
      if (key === "...") continue;
      if (!(key in actual)) out(`${at}.${key}`, `missing (expected ${JSON.stringify(value)})`);
      else compare(value, (actual as Record<string, unknown>)[key], `${at}.${key}`, out);
    }
    if (!open)
      for (const key of Object.keys(actual))
        if (!(key in expected)) out(`${at}.${key}`, "not in Canton's answer");
    return;
  }
  if (expected !== actual) out(at, `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function pathValue(value: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);
}

async function exchange(
  stack: Stack,
  pair: Pair,
  body: unknown,
  token: string,
): Promise<{ status: number; body?: unknown; protocol?: string }> {
  if (pair.request.method === "WS") return upgrade(stack, pair.request.path, token);
  const response = await stack.request(pair.request.path, {
    method: pair.request.method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    token,
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json");
  return { status: response.status, body: json && text !== "" ? JSON.parse(text) : text };
}

/** The answer to a WebSocket upgrade with the documented subprotocols: its status, and the 101's protocol. */
function upgrade(stack: Stack, path: string, token: string): Promise<{ status: number; protocol?: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${path}`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    socket.on("unexpected-response", (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      response.resume();
      socket.terminate();
    });
    socket.on("open", () => {
      resolve({ status: 101, protocol: socket.protocol });
      socket.close(1000);
    });
    socket.on("error", (error) => {
      if (!/Unexpected server response/.test(String(error))) reject(error);
    });
  });
}

describe("golden pairs from Canton's published JSON API examples", () => {
  let stack: Stack;
  const vars: Record<string, unknown> = {};
  const differences: Difference[] = [];

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  for (const pair of PAIRS) {
    it(`${pair.name} (${pair.source.split(",")[0]})`, async () => {
      const body = substitute(pair.request.body, vars);
      const token = pair.user === undefined ? stack.token : tokenFor(pair.user);
      const actual = await exchange(
        stack,
        { ...pair, request: { ...pair.request, path: String(substitute(pair.request.path, vars)) } },
        body,
        token,
      );
      const expected = substitute(pair.response, vars) as Pair["response"];
      const found: Difference[] = [];
      const out: Report = (at, what) => {
        found.push({ pair: pair.name, at, what });
      };
      if (actual.status !== expected.status)
        out("status", `expected ${expected.status}, got ${actual.status}`);
      if (expected.protocol !== undefined && actual.protocol !== expected.protocol)
        out("protocol", `expected ${expected.protocol}, got ${actual.protocol}`);
      if (expected.body !== undefined) compare(expected.body, actual.body, "body", out);
      for (const [name, spec] of Object.entries(pair.capture ?? {})) {
        const path = typeof spec === "string" ? spec : spec.path;
        const value = pathValue(actual.body, path);
        vars[name] = typeof spec === "string" ? value : new RegExp(spec.pattern).exec(String(value))?.[1];
        assert.notEqual(vars[name], undefined, `${pair.name}: nothing to capture as ${name} at ${path}`);
      }
      differences.push(...found);
      const unlisted = found.filter(
        (d) => !KNOWN_OPEN_DIFFERENCES.some((k) => k.pair === d.pair && k.at === d.at),
      );
      assert.deepEqual(unlisted, [], `${pair.name} differs from Canton (${pair.source})`);
    });
  }

  it("still shows every listed open difference (remove an entry once its issue item is fixed)", () => {
    const gone = KNOWN_OPEN_DIFFERENCES.filter(
      (k) => !differences.some((d) => d.pair === k.pair && d.at === k.at),
    );
    assert.deepEqual(gone, []);
  });
});
