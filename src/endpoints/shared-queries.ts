import type { BodyValidator } from "./body-validator.js";
import { parseStreamRequest } from "./stream-request.js";

/** Distinct query frames remembered: a reconnect storm's crowd sends a handful. */
const REMEMBERED = 64;
/** Longer frames are parsed each time: a remembered frame's text is kept, and its parse. */
const MAX_REMEMBERED_BYTES = 16 * 1024;

/**
 * Query frames parsed once for the sockets that send the same text: a reconnect storm's crowd
 * sends the same few frames thousands of times, and each parse and validation cost a start more
 * than its join. The request a frame parses to is frozen and shared by every socket that sent
 * that text (nothing downstream may write to it: a write would throw, not leak into another
 * socket's request). Only requests are remembered, never tokens: a frame holds none. A frame the
 * schema refuses is not remembered (each sender gets its own error).
 */
export class SharedQueries {
  readonly #recent = new Map<string, unknown>();

  parse(text: string, schema: string, validator: BodyValidator): unknown {
    if (text.length > MAX_REMEMBERED_BYTES) return parseStreamRequest(text, schema, validator);
    const key = `${schema}\n${text}`;
    const known = this.#recent.get(key);
    if (known !== undefined) return known;
    const request = deepFreeze(parseStreamRequest(text, schema, validator));
    // The oldest goes first: insertion order.
    if (this.#recent.size >= REMEMBERED) this.#recent.delete(this.#recent.keys().next().value as string);
    this.#recent.set(key, request);
    return request;
  }
}

/** Freezes a parsed JSON value all the way down (a loop: parses nest as deep as request-json allows). */
function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next === null || typeof next !== "object" || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const member of Object.values(next)) pending.push(member);
  }
  return value;
}
