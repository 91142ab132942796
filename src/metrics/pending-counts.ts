/** What a series' pending increments go to: a prom-client Counter or Gauge. */
interface Incrementable<N extends string> {
  inc(labels: Partial<Record<N, string | number>>, value: number): void;
}

interface Series<N extends string> {
  readonly labels: Partial<Record<N, string>>;
  pending: number;
  dirty: boolean;
}

/**
 * Increments of a metric with two labels, kept per series as plain numbers and handed to the
 * metric when it is read (its `collect`, which prom-client calls at every scrape and snapshot).
 * prom-client makes a new string of a series' labels at every `inc`: per frame sent and per
 * subscriber start that was the largest source of the gateway's garbage (9% of all bytes
 * allocated over a reconnect storm). Here a series is found by its label values (strings the
 * callers hold already, whose hashes V8 keeps), and its labels object is made once.
 */
export class PendingCounts<N extends string> {
  readonly #first: N;
  readonly #second: N;
  readonly #series = new Map<string, Map<string, Series<N>>>();
  #dirty: Series<N>[] = [];

  constructor(first: N, second: N) {
    this.#first = first;
    this.#second = second;
  }

  /** Adds `delta` to the series `first`=`a`, `second`=`b`. */
  add(a: string, b: string, delta: number): void {
    let byB = this.#series.get(a);
    if (byB === undefined) {
      byB = new Map();
      this.#series.set(a, byB);
    }
    let series = byB.get(b);
    if (series === undefined) {
      series = {
        labels: { [this.#first]: a, [this.#second]: b } as Partial<Record<N, string>>,
        pending: 0,
        dirty: false,
      };
      byB.set(b, series);
    }
    series.pending += delta;
    if (!series.dirty) {
      series.dirty = true;
      this.#dirty.push(series);
    }
  }

  /** Hands every pending increment to `metric` (from its `collect`). */
  flushInto(metric: Incrementable<N>): void {
    const dirty = this.#dirty;
    this.#dirty = [];
    for (const series of dirty) {
      if (series.pending !== 0) metric.inc(series.labels, series.pending);
      series.pending = 0;
      series.dirty = false;
    }
  }
}
