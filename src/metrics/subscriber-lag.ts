import { Gauge, type Registry } from "prom-client";

/** Where one WebSocket subscriber stands, read at scrape. */
export interface SubscriberLag {
  /** Bytes sent to the subscriber and not yet taken by it: its socket's buffer and the gateway's queue. */
  readonly bytes: number;
  /** The offset of the last element it was handed; absent before the first, or when elements have none. */
  readonly offset?: number;
  /** The newest offset of the stream it reads, when that stream knows it (a fan-out's shared upstream). */
  readonly newest?: number;
}

export interface LagSource {
  lag(): SubscriberLag;
}

interface EndpointLag {
  maxBytes: number;
  bytes: number;
  maxOffsets: number;
  offsets: number;
}

/**
 * How far WebSocket subscribers are behind, by endpoint, measured over the live subscribers when
 * Prometheus asks (nothing per element). Per endpoint, the largest lag of one subscriber and the
 * sum over all of them, as separate gauges: the largest finds the one slow client, the sum over
 * the subscribers (divided by `ledger_gateway_ws_streams_open`, which counts the same sockets) is
 * the mean. Both survive the worker threads' merge (a max of maxima, a sum of sums) and any
 * PromQL aggregation over instances, where a mean or a quantile would not.
 *
 * In offsets, a subscriber is behind the newest offset of what it reads: a fan-out member its
 * shared upstream's last; one on its own call the newest offset any subscriber of the endpoint was
 * handed (or seen handed at an earlier scrape: the ledger does not go back). In bytes, it is what
 * its socket has not taken yet. Together they are its backlog: not handed to it yet, and handed
 * but not read.
 */
export class SubscriberLagGauges {
  readonly #subscribers = new Map<string, Set<LagSource>>();
  /** The newest offset seen handed on each endpoint. */
  readonly #newest = new Map<string, number>();
  /** This scrape's measure: the four gauges' collects share one pass over the subscribers. */
  #measured: Map<string, EndpointLag> | undefined;

  readonly maxBytes: Gauge<"endpoint">;
  readonly bytes: Gauge<"endpoint">;
  readonly maxOffsets: Gauge<"endpoint">;
  readonly offsets: Gauge<"endpoint">;

  constructor(registry: Registry) {
    const gauge = (
      name: string,
      help: string,
      aggregator: "max" | "sum",
      stat: (lag: EndpointLag) => number,
    ): Gauge<"endpoint"> => {
      const made: Gauge<"endpoint"> = new Gauge({
        name,
        help,
        labelNames: ["endpoint"] as const,
        aggregator,
        registers: [registry],
        collect: () => {
          for (const [endpoint, lag] of this.#measure()) made.set({ endpoint }, stat(lag));
        },
      });
      return made;
    };
    this.maxBytes = gauge(
      "ledger_gateway_subscriber_lag_max_bytes",
      "The largest backlog in bytes of one WebSocket subscriber, by endpoint: sent to it and not yet taken (its socket's buffer and the gateway's queue); with worker threads, the largest of theirs",
      "max",
      (lag) => lag.maxBytes,
    );
    this.bytes = gauge(
      "ledger_gateway_subscriber_lag_bytes",
      "Bytes sent to WebSocket subscribers and not yet taken, summed over the endpoint's subscribers (divided by ledger_gateway_ws_streams_open: the mean)",
      "sum",
      (lag) => lag.bytes,
    );
    this.maxOffsets = gauge(
      "ledger_gateway_subscriber_lag_max_offsets",
      "The largest lag in offsets of one WebSocket subscriber, by endpoint: how far its last element is behind the newest offset of its shared upstream (fan-out members) or of the endpoint's streams (own calls); with worker threads, the largest of theirs",
      "max",
      (lag) => lag.maxOffsets,
    );
    this.offsets = gauge(
      "ledger_gateway_subscriber_lag_offsets",
      "Lag in offsets of WebSocket subscribers, summed over the endpoint's subscribers (divided by ledger_gateway_ws_streams_open: the mean)",
      "sum",
      (lag) => lag.offsets,
    );
  }

  /** The endpoint's gauges at 0 before its first subscriber (see GatewayMetrics.declare). */
  declare(endpoint: string): void {
    if (!this.#subscribers.has(endpoint)) this.#subscribers.set(endpoint, new Set());
    for (const gauge of [this.maxBytes, this.bytes, this.maxOffsets, this.offsets])
      gauge.set({ endpoint }, 0);
  }

  /** Measures `source` at every scrape until `untrack`. */
  track(endpoint: string, source: LagSource): void {
    let sources = this.#subscribers.get(endpoint);
    if (sources === undefined) {
      sources = new Set();
      this.#subscribers.set(endpoint, sources);
    }
    sources.add(source);
  }

  /**
   * `source` is measured no more. A pair of calls rather than a returned removal: a closure and
   * its scope were two more objects every subscriber kept.
   */
  untrack(endpoint: string, source: LagSource): void {
    this.#subscribers.get(endpoint)?.delete(source);
  }

  #measure(): Map<string, EndpointLag> {
    if (this.#measured !== undefined) return this.#measured;
    const measured = new Map<string, EndpointLag>();
    for (const [endpoint, sources] of this.#subscribers) {
      const lags = [...sources].map((source) => source.lag());
      let newest = this.#newest.get(endpoint) ?? Number.NEGATIVE_INFINITY;
      for (const { offset, newest: upstream } of lags)
        newest = Math.max(newest, offset ?? newest, upstream ?? newest);
      if (Number.isFinite(newest)) this.#newest.set(endpoint, newest);
      const lag: EndpointLag = { maxBytes: 0, bytes: 0, maxOffsets: 0, offsets: 0 };
      for (const { bytes, offset, newest: upstream } of lags) {
        const behind = offset === undefined ? 0 : Math.max(0, (upstream ?? newest) - offset);
        lag.maxBytes = Math.max(lag.maxBytes, bytes);
        lag.bytes += bytes;
        lag.maxOffsets = Math.max(lag.maxOffsets, behind);
        lag.offsets += behind;
      }
      measured.set(endpoint, lag);
    }
    // A scrape runs the four collects in one synchronous pass (prom-client calls each gauge's
    // collect as it starts reading it): they share this measure, and the next scrape measures anew.
    this.#measured = measured;
    queueMicrotask(() => {
      this.#measured = undefined;
    });
    return measured;
  }
}
