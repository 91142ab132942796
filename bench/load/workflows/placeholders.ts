import { randomInt } from "node:crypto";

/**
 * `{{...}}` placeholders in a step's path and body, compiled once when the scenario is read (a
 * bad one is an error naming where it is) and filled in for each request. A string that is one
 * placeholder and nothing else takes the value's own JSON type (a saved contract id, a saved
 * number, the list of parties); inside longer text, a value is written as text.
 */

/** What one iteration of a scenario fills its placeholders with. */
export interface Fill {
  party: string;
  /** The next of the run's parties (the same one when the run has one). */
  otherParty: string;
  parties: readonly string[];
  userId: string;
  /** Fresh for each step: the run's prefix, the scenario, the iteration, the step. */
  commandId: string;
  prefix: string;
  iteration: number;
  /** What earlier steps of this iteration saved. */
  saved: ReadonlyMap<string, unknown>;
}

type Part = string | ((fill: Fill) => unknown);

/** A template compiled: a function of the fill that gives the JSON value to send. */
export type Filled = (fill: Fill) => unknown;

const NAMED: Record<string, (fill: Fill) => unknown> = {
  party: (f) => f.party,
  otherParty: (f) => f.otherParty,
  parties: (f) => f.parties,
  userId: (f) => f.userId,
  commandId: (f) => f.commandId,
  prefix: (f) => f.prefix,
  iteration: (f) => String(f.iteration),
};

/** The placeholders a scenario file may use, for error messages and the docs. */
const PLACEHOLDER_FORMS =
  "party, otherParty, parties, userId, commandId, prefix, iteration, int:MIN..MAX, decimal:MIN..MAX, text:LENGTH, pick:A,B,C, or a name an earlier step saves";

export const SAVED_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class PlaceholderError extends Error {}

/** Integers as the JSON Ledger API writes Int64: text. */
function intBetween(text: string, spec: string): Filled {
  const match = /^(-?\d+)\.\.(-?\d+)$/.exec(text);
  const [min, max] = match ? [BigInt(match[1] as string), BigInt(match[2] as string)] : [1n, 0n];
  if (min > max) throw new PlaceholderError(`{{${spec}}}: int takes MIN..MAX, e.g. {{int:1..100}}`);
  const span = max - min + 1n;
  if (span > BigInt(Number.MAX_SAFE_INTEGER))
    throw new PlaceholderError(`{{${spec}}}: the range is wider than 2^53`);
  return () => String(min + BigInt(randomInt(0, Number(span))));
}

/**
 * Decimals as the JSON Ledger API writes Numeric: text, with as many decimals as the bounds have
 * (`decimal:1.00..500.00`: two).
 */
function decimalBetween(text: string, spec: string): Filled {
  const match = /^(-?\d+)(?:\.(\d+))?\.\.(-?\d+)(?:\.(\d+))?$/.exec(text);
  if (!match)
    throw new PlaceholderError(`{{${spec}}}: decimal takes MIN..MAX, e.g. {{decimal:1.00..500.00}}`);
  const scale = Math.max(match[2]?.length ?? 0, match[4]?.length ?? 0);
  const scaled = (whole: string, fraction = "") => BigInt(whole + fraction.padEnd(scale, "0"));
  const sign = (whole: string) => (whole.startsWith("-") ? -1n : 1n);
  // -1.5 is -(1 + .5): the fraction takes the sign of the whole part.
  const bound = (whole: string, fraction?: string) => sign(whole) * scaled(whole.replace("-", ""), fraction);
  const min = bound(match[1] as string, match[2]);
  const max = bound(match[3] as string, match[4]);
  if (min > max) throw new PlaceholderError(`{{${spec}}}: MIN is above MAX`);
  const span = max - min + 1n;
  if (span > BigInt(Number.MAX_SAFE_INTEGER))
    throw new PlaceholderError(`{{${spec}}}: the range is wider than 2^53 steps`);
  return () => {
    const value = min + BigInt(randomInt(0, Number(span)));
    const digits = (value < 0n ? -value : value).toString().padStart(scale + 1, "0");
    const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    return value < 0n ? `-${text}` : text;
  };
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function randomText(text: string, spec: string): Filled {
  const length = Number(text);
  if (!Number.isInteger(length) || length < 1 || length > 10_000)
    throw new PlaceholderError(`{{${spec}}}: text takes a length of 1 to 10000, e.g. {{text:12}}`);
  return () => Array.from({ length }, () => ALPHABET[randomInt(0, ALPHABET.length)]).join("");
}

function pick(text: string, spec: string): Filled {
  const choices = text.split(",");
  if (text === "" || choices.some((c) => c === ""))
    throw new PlaceholderError(`{{${spec}}}: pick takes a list, e.g. {{pick:USD,EUR,CHF}}`);
  return () => choices[randomInt(0, choices.length)];
}

const GENERATORS: Record<string, (text: string, spec: string) => Filled> = {
  int: intBetween,
  decimal: decimalBetween,
  text: randomText,
  pick,
};

/**
 * One placeholder's value as a function of the fill. `saved` names what earlier steps save; a
 * name in it is read from the iteration's saved values.
 */
function placeholder(spec: string, saved: ReadonlySet<string>): (fill: Fill) => unknown {
  const colon = spec.indexOf(":");
  if (colon > 0) {
    const generator = GENERATORS[spec.slice(0, colon)];
    if (generator) return generator(spec.slice(colon + 1), spec);
  }
  const named = NAMED[spec];
  if (named) return named;
  if (SAVED_NAME.test(spec)) {
    if (!saved.has(spec))
      throw new PlaceholderError(
        `{{${spec}}} is saved by no earlier step (${saved.size > 0 ? `saved before it: ${[...saved].join(", ")}` : "none saves anything before it"})`,
      );
    return (fill) => fill.saved.get(spec);
  }
  throw new PlaceholderError(`{{${spec}}} is not a placeholder (${PLACEHOLDER_FORMS})`);
}

const PLACEHOLDER = /\{\{\s*(.*?)\s*\}\}/g;

/** A string with placeholders, split into text and placeholders. */
function compileString(text: string, saved: ReadonlySet<string>, encode: (s: string) => string): Filled {
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(placeholder(match[1] as string, saved));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  if (parts.length === 0) return () => "";
  const [only] = parts;
  if (parts.length === 1 && typeof only === "function") return only;
  if (parts.every((part) => typeof part === "string")) return () => text;
  const asText = (value: unknown) =>
    encode(typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value));
  return (fill) => parts.map((part) => (typeof part === "string" ? part : asText(part(fill)))).join("");
}

/**
 * A JSON template (a body) compiled. Objects' keys are kept as they are; placeholders are read in
 * string values only. `where` names the place for an error (`body.commands.actAs[0]`).
 */
export function compileTemplate(value: unknown, saved: ReadonlySet<string>, where = "body"): Filled {
  if (typeof value === "string") {
    try {
      return compileString(value, saved, (s) => s);
    } catch (error) {
      if (error instanceof PlaceholderError) throw new PlaceholderError(`${where}: ${error.message}`);
      throw error;
    }
  }
  if (Array.isArray(value)) {
    const items = value.map((item, i) => compileTemplate(item, saved, `${where}[${i}]`));
    return (fill) => items.map((item) => item(fill));
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(
      ([key, item]) => [key, compileTemplate(item, saved, `${where}.${key}`)] as const,
    );
    return (fill) => Object.fromEntries(entries.map(([key, item]) => [key, item(fill)]));
  }
  return () => value;
}

/** A request path with placeholders: each value is URL-encoded where it lands. */
export function compilePath(path: string, saved: ReadonlySet<string>): (fill: Fill) => string {
  try {
    const filled = compileString(path, saved, encodeURIComponent);
    return (fill) => {
      const value = filled(fill);
      return typeof value === "string" ? value : encodeURIComponent(JSON.stringify(value));
    };
  } catch (error) {
    if (error instanceof PlaceholderError) throw new PlaceholderError(`path: ${error.message}`);
    throw error;
  }
}
