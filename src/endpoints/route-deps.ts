import type { LedgerJson } from "../codec/index.js";
import type { LedgerLossCause } from "../errors/index.js";
import type { LedgerClient } from "../ledger/ledger-client.js";
import type { LedgerApiProtos } from "../proto/ledger-api-protos.js";

/** What every route handler and stream endpoint may use. */
export interface RouteDeps {
  ledger: LedgerClient;
  json: LedgerJson;
  protos: LedgerApiProtos;
  /** How update and completion streams outlive a lost ledger connection (src/streams/resume-on-loss.ts). */
  resume: StreamResume;
}

interface StreamResume {
  /** How long a stream is reopened after a loss (websocket-config.resume-window); 0: never. */
  windowMs: number;
  onResume?(endpoint: string, cause: LedgerLossCause, seconds: number): void;
}
