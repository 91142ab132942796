import type { LedgerJson } from "../codec/index.js";
import type { LedgerClient } from "../ledger/ledger-client.js";
import type { LedgerApiProtos } from "../proto/ledger-api-protos.js";

/** What every route handler and stream endpoint may use. */
export interface RouteDeps {
  ledger: LedgerClient;
  json: LedgerJson;
  protos: LedgerApiProtos;
}
