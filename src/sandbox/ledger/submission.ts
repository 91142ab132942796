import type { Commands__Output } from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { validateCommands } from "./commands/command-validation.js";
import type { LedgerRuntime } from "./ledger-runtime.js";
import type { SubmissionOutcome } from "./participant-ledger.js";

/**
 * The submission path every command endpoint shares: user id from the token when the request
 * has none, CanActAs/CanReadAs rights, request validation, then the ledger.
 */
export async function submitCommands(
  runtime: LedgerRuntime,
  commands: Commands__Output | null,
  context: CallContext,
): Promise<SubmissionOutcome & { readonly readAs: readonly string[] }> {
  await context.authorize({ kind: "act-as", actAs: commands?.actAs ?? [], readAs: commands?.readAs ?? [] });
  const validated = validateCommands(commands, context.caller.userId ?? "");
  const outcome = runtime.ledger.submit(validated, {
    traceId: context.traceId,
    participant: runtime.participantName,
  });
  return { ...outcome, readAs: validated.readAs };
}
