import WebSocket from "ws";
import { tokenFor } from "./tokens.js";
import { partyFilter, updatesRequest } from "./update-requests.js";

type Json = Record<string, unknown>;

/** An open-ended /v2/updates WebSocket stream of one party, as a client sees it. */
export interface UpdateSubscription {
  /** Offsets of the elements received, transactions and checkpoints alike, in order. */
  readonly offsets: number[];
  /** The update's kind of each element in `offsets` (Transaction, OffsetCheckpoint, ...). */
  readonly kinds: string[];
  /** Frames that are not elements (error frames). */
  readonly errors: Json[];
  /** How the socket closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `n` elements arrived; rejects if the socket closes first, saying what it saw. */
  elements(n: number): Promise<void>;
  /** Resolves true once an element at or past `offset` arrived, false if the socket closes first. */
  reaches(offset: number): Promise<boolean>;
  /** Sends a renewal frame (`{"token": ...}`). */
  renew(token: string): void;
  close(): void;
}

/**
 * Subscribes to the ACS deltas of `party` after `beginExclusive` on the gateway at `baseUrl`
 * (http://host:port[/prefix]), with an `actAs-<party>` token in the WebSocket subprotocol unless
 * `token` is given.
 */
export function subscribeUpdates(
  baseUrl: string,
  party: string,
  options: { token?: string; beginExclusive?: number } = {},
): UpdateSubscription {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v2/updates`, [
    "daml.ws.auth",
    `jwt.token.${options.token ?? tokenFor(`actAs-${party}`)}`,
  ]);
  const offsets: number[] = [];
  const kinds: string[] = [];
  const errors: Json[] = [];
  const waiters = new Set<() => void>();
  let closeSeen: { code: number; reason: string } | undefined;
  socket.on("open", () =>
    socket.send(JSON.stringify(updatesRequest(partyFilter(party), options.beginExclusive ?? 0))),
  );
  socket.on("message", (data: Buffer) => {
    const frame = JSON.parse(data.toString("utf8")) as {
      update?: Record<string, { value: { offset: number } }>;
    };
    if (frame.update === undefined) errors.push(frame as Json);
    else {
      const [kind, content] = Object.entries(frame.update)[0] ?? [];
      offsets.push(content?.value.offset as number);
      kinds.push(kind as string);
    }
    for (const wake of waiters) wake();
  });
  socket.on("error", () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => {
      closeSeen = { code, reason: reason.toString() };
      resolve(closeSeen);
      for (const wake of waiters) wake();
    }),
  );
  /** Resolves with `settled()`'s first non-undefined answer, checked at each frame and at close. */
  const until = <T>(settled: () => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const check = () => {
        const answer = settled();
        if (answer === undefined) return;
        waiters.delete(check);
        resolve(answer);
      };
      waiters.add(check);
      check();
    });
  return {
    offsets,
    kinds,
    errors,
    closed,
    async elements(n) {
      const ok = await until(() =>
        offsets.length >= n ? true : closeSeen !== undefined ? false : undefined,
      );
      if (!ok)
        throw new Error(
          `closed ${closeSeen?.code} "${closeSeen?.reason}" after ${offsets.length} of ${n} elements; errors ${JSON.stringify(errors)}`,
        );
    },
    reaches: (offset) =>
      until(() => (offsets.some((o) => o >= offset) ? true : closeSeen !== undefined ? false : undefined)),
    renew: (token) => socket.send(JSON.stringify({ token })),
    close: () => socket.close(1000),
  };
}
