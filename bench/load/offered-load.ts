/**
 * The open model's account of what it offered against what it could do, per request scenario:
 * arrivals due in the measured window (offered), arrivals it did not send because `maxInFlight`
 * requests were already out (dropped: k6's `dropped_iterations`), and answers received inside the
 * window (achieved), over the window and per interval. A request late for a free connection is
 * not dropped: it waits, and its wait is in its latency; only past the cap does the tool give up
 * an arrival, as a tester's pool of virtual users would.
 */
interface Counts {
  offered: number;
  dropped: number;
  answered: number;
}

const zero = (): Counts => ({ offered: 0, dropped: 0, answered: 0 });

export class OfferedLoad {
  private inFlight = 0;
  private readonly total = new Map<string, Counts>();
  private interval = new Map<string, Counts>();

  constructor(
    private readonly maxInFlight: number,
    /** Told of each dropped arrival (the live metrics). */
    private readonly onDrop: (scenario: string) => void = () => {},
  ) {}

  private count(scenario: string, key: keyof Counts): void {
    for (const map of [this.total, this.interval]) {
      const counts = map.get(scenario) ?? zero();
      counts[key]++;
      map.set(scenario, counts);
    }
  }

  /** An arrival is due: true when it may be sent (and is then in flight until `settled`). */
  arrive(scenario: string, measured: boolean): boolean {
    const admitted = this.inFlight < this.maxInFlight;
    if (measured) this.count(scenario, "offered");
    if (!admitted) {
      if (measured) {
        this.count(scenario, "dropped");
        this.onDrop(scenario);
      }
      return false;
    }
    this.inFlight++;
    return true;
  }

  /** An admitted request ended; `inWindow`: its answer (of any kind) came inside the measured window. */
  settled(scenario: string, inWindow: boolean): void {
    this.inFlight--;
    if (inWindow) this.count(scenario, "answered");
  }

  get outstanding(): number {
    return this.inFlight;
  }

  /** This interval's counts per scenario; the next interval starts at zero. */
  cut(): Map<string, Counts> {
    const cut = this.interval;
    this.interval = new Map();
    return cut;
  }

  /** The window's: offered and dropped, their rates and the achieved rate over `seconds`. */
  result(scenario: string, seconds: number) {
    const counts = this.total.get(scenario) ?? zero();
    return {
      offered: counts.offered,
      dropped: counts.dropped,
      offeredPerSecond: Math.round((counts.offered / seconds) * 10) / 10,
      achievedPerSecond: Math.round((counts.answered / seconds) * 10) / 10,
    };
  }

  /** All scenarios together (the overall figures). */
  overall(seconds: number) {
    const sum = zero();
    for (const counts of this.total.values()) {
      sum.offered += counts.offered;
      sum.dropped += counts.dropped;
      sum.answered += counts.answered;
    }
    return {
      offered: sum.offered,
      dropped: sum.dropped,
      offeredPerSecond: Math.round((sum.offered / seconds) * 10) / 10,
      achievedPerSecond: Math.round((sum.answered / seconds) * 10) / 10,
    };
  }
}
