import type { LedgerClient } from "./ledger-client.js";
import type { TraceContext } from "./trace-context.js";

/**
 * Whether the ledger accepts `token` at all: a call every caller whose claims the ledger
 * resolves may make (public claims). It fails exactly where the ledger's own claim resolution
 * does (bad token: UNAUTHENTICATED; unknown or deactivated user, other identity provider:
 * PERMISSION_DENIED). The ledger decides; no rule of its is copied here.
 */
export async function callerAdmission(
  ledger: Pick<LedgerClient, "unary">,
  token: string | undefined,
  trace?: TraceContext,
): Promise<void> {
  await ledger.unary("VersionService", "GetLedgerApiVersion", {}, token, trace ? { trace } : {});
}
