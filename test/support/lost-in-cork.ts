import assert from "node:assert/strict";
import { gatewayMetric } from "./gateway-metric.js";

/** How a stream a test read ended: its close code and how many frames came before it. */
export interface ClosedStream {
  code: number;
  frames: number;
}

/**
 * Streams opened together (`opens`) on gateways started as processes, which upgrade corked as
 * users run them, each opened once more when uWS shut it down inside its corked upgrade
 * (uNetworking/uWebSockets#1929: src/ws/corked-upgrade.ts keeps that rare, not out), as a
 * client reconnects. Such a socket closes 1006 right after its 101, before any frame, and its
 * gateway counts it (ledger_gateway_ws_upgrades_lost_in_cork_total): a 1006 before any frame is
 * taken for one only when the gateways (`gatewayUrls`, with any path prefix) counted exactly as
 * many, and fails the test otherwise. Answers every stream's last reading, in `opens`' order.
 */
export async function reopenedWhenLostInCork<T extends ClosedStream>(
  gatewayUrls: readonly string[],
  opens: readonly (() => Promise<T>)[],
): Promise<T[]> {
  const before = await lostInCork(gatewayUrls);
  const streams = (await Promise.all(opens.map((open) => open()))) as T[];
  const lost = streams.flatMap((stream, i) => (stream.code === 1006 && stream.frames === 0 ? [i] : []));
  if (lost.length === 0) return streams;
  assert.equal(
    (await lostInCork(gatewayUrls)) - before,
    lost.length,
    `${lost.length} stream(s) closed 1006 before any frame: only as many as the gateways lost in their corks may`,
  );
  for (const i of lost) streams[i] = await (opens[i] as () => Promise<T>)();
  return streams;
}

/**
 * A socket held open (`open` answers once it is) on a gateway started as a process, opened once
 * more when its gateway (`gatewayUrl`) counted it lost in its corked upgrade, as
 * reopenedWhenLostInCork takes such a loss. The opens must not overlap: the count tells only that
 * some socket was lost meanwhile.
 */
export async function heldUnlessLostInCork<T>(gatewayUrl: string, open: () => Promise<T>): Promise<T> {
  const before = await lostInCork([gatewayUrl]);
  const socket = await open();
  return (await lostInCork([gatewayUrl])) === before ? socket : open();
}

async function lostInCork(gatewayUrls: readonly string[]): Promise<number> {
  let sum = 0;
  for (const url of gatewayUrls)
    sum += await gatewayMetric(url, "ledger_gateway_ws_upgrades_lost_in_cork_total");
  return sum;
}
