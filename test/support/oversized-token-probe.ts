import type { NettyStack } from "./netty-stack.js";
import { paddedToken } from "./netty-stack.js";
import { subscribeUpdates } from "./update-subscription.js";

/** What one request with an oversized token did to the gateway and to another user's stream. */
export interface OversizedTokenProbe {
  /** The oversized request's answer. */
  status: number;
  body: string;
  /**
   * The other user's open /v2/updates stream: whether it delivered the tick created after the
   * oversized request, or closed (with the error frames it received before closing).
   */
  otherStream:
    | { delivered: true }
    | { delivered: false; close: { code: number; reason: string }; errors: Record<string, unknown>[] };
  /** Connections the gateway opened to the ledger meanwhile (stack.front counts them); 0: none. */
  newLedgerConnections: number;
}

/**
 * Issue 20 item 4 (and its "Done when": a 16 KB token gets a client error and another user's open
 * stream is untouched), as an experiment on a stack built with `faultProxy: true`: another
 * user's WebSocket stream of the preloaded ticks is open, one request with a token of
 * `tokenBytes` is sent, then a tick is created with a valid token and the stream either delivers
 * it or has closed.
 */
export async function probeOversizedToken(
  stack: NettyStack,
  tokenBytes = 16 * 1024,
  path = "/v2/state/ledger-end",
): Promise<OversizedTokenProbe> {
  if (stack.front === undefined) throw new Error("probeOversizedToken needs a stack with faultProxy: true");
  const other = subscribeUpdates(stack.url, stack.party);
  try {
    await other.elements(stack.sandbox.preloaded?.ticks ?? 0);
    const connections = stack.front.accepted;
    const res = await stack.request(path, { token: paddedToken(tokenBytes) });
    const body = await res.text();
    const offset = await stack.createTick(0);
    const delivered = await other.reaches(offset);
    return {
      status: res.status,
      body,
      otherStream: delivered
        ? { delivered: true }
        : { delivered: false, close: await other.closed, errors: other.errors },
      newLedgerConnections: stack.front.accepted - connections,
    };
  } finally {
    other.close();
  }
}
