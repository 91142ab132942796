import { status as GrpcStatus } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { LedgerClient } from "../ledger/ledger-client.js";
import { DEFAULT_API_VERSION } from "../proto/api-version.js";
import type { ServedApiVersion } from "../proto/served-api-version.js";

/** Waits between asks while the participant does not answer: doubled from 1 s up to 30 s. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * Asks the participant its release (VersionService.GetLedgerApiVersion, which Canton answers
 * without a token) at start and again on every new connection to it (a restarted or upgraded
 * participant), and records it in the gateway's ServedApiVersion. Until it answered, the ask is
 * repeated (backing off to every 30 s). A participant that answers with an error rather than its
 * release (a proxy that wants a token, no VersionService) gets no more asks until the next
 * connection; in `auto` mode the gateway then serves DEFAULT_API_VERSION, with a warning that
 * says how to pin the right one.
 */
export class LedgerVersionWatch {
  #asking: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  #stopped = false;

  constructor(
    private readonly ledger: LedgerClient,
    private readonly served: ServedApiVersion,
    private readonly log: Logger,
    private readonly target: string,
  ) {}

  /** Asks now, unless an ask is under way (a new connection carries that one); resolves when it ended. */
  ask(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    clearTimeout(this.#timer);
    this.#asking ??= this.#askOnce().finally(() => {
      this.#asking = undefined;
    });
    return this.#asking;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #askOnce(): Promise<void> {
    let reported: string;
    try {
      const answer = await this.ledger.unary<{ version?: string }>(
        "VersionService",
        "GetLedgerApiVersion",
        {},
        undefined,
      );
      reported = answer.version ?? "";
    } catch (error) {
      this.#failed(error as { code?: number; details?: string });
      return;
    }
    if (this.#stopped) return;
    this.#failures = 0;
    const before = this.served.reported();
    const { served, known, changed } = this.served.record(reported);
    const fields = { ledger: this.target, reported, served, setting: this.served.setting };
    if (this.served.setting !== "auto" && !known) {
      if (reported !== before)
        this.log.warn(
          fields,
          `ledger.api-version pins Canton ${served}, but the participant reports ${JSON.stringify(reported)}: serving ${served}`,
        );
    } else if (!known) {
      if (reported !== before)
        this.log.warn(
          fields,
          `the participant reports Canton ${JSON.stringify(reported)}, a release this gateway does not know: serving the nearest known one, ${served} (pin ledger.api-version to choose another)`,
        );
    } else if (changed || reported !== before) {
      this.log.info(fields, `the participant runs Canton ${reported}: serving its JSON API (${served})`);
    }
  }

  #failed(error: { code?: number; details?: string }): void {
    if (this.#stopped) return;
    const code = error.code;
    // The ledger is away (or slow): ask again later; a new connection asks at once anyway.
    if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED || code === undefined) {
      this.#failures++;
      const retryInMs = Math.min(RETRY_FIRST_MS * 2 ** (this.#failures - 1), RETRY_MAX_MS);
      this.#timer = setTimeout(() => void this.ask(), retryInMs);
      this.#timer.unref();
      return;
    }
    const assumed = this.served.current() ?? this.served.assume(DEFAULT_API_VERSION);
    this.log.warn(
      { ledger: this.target, code, cause: error.details, served: assumed, setting: this.served.setting },
      `the participant does not say which Canton release it runs (GetLedgerApiVersion failed): serving ${assumed}; pin ledger.api-version to the participant's release`,
    );
  }
}
