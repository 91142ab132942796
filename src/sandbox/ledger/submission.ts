import type { Commands__Output, ReassignmentCommands__Output } from "../../proto/ledger-api-types.js";
import type { Requirement } from "../auth/authorization.js";
import type { CallContext } from "../call-context.js";
import { interactiveErrors } from "../interactive/interactive-errors.js";
import type { SubmissionOutcome } from "./command-submitter.js";
import { validateCommands } from "./commands/command-validation.js";
import { validateReassignment } from "./commands/reassignment-validation.js";
import type { ReassignmentUpdate } from "./ledger-records.js";
import type { LedgerRuntime } from "./ledger-runtime.js";

/**
 * The submission path every command endpoint shares: the request's user is the token's (its user
 * id when the request has none), CanActAs/CanReadAs rights, then what the answer's format needs
 * to be read (`reader`, as Canton adds its claims), request validation, then the ledger.
 */
export async function submitCommands(
  runtime: LedgerRuntime,
  commands: Commands__Output | null,
  context: CallContext,
  reader?: Requirement,
): Promise<SubmissionOutcome & { readonly readAs: readonly string[] }> {
  await context.authorize({ kind: "own-user-id", userId: commands?.userId ?? "" });
  await context.authorize({ kind: "act-as", actAs: commands?.actAs ?? [], readAs: commands?.readAs ?? [] });
  if (reader !== undefined) await context.authorize(reader);
  const validated = validateCommands(commands, context.caller.userId ?? "");
  submittersMayBeActedFor(runtime, validated.actAs);
  const outcome = runtime.ledger.submit(validated, {
    traceId: context.traceId,
    participant: runtime.participantName,
  });
  return { ...outcome, readAs: validated.readAs };
}

/**
 * The reassignment path: the request's user is the token's, the submitter's CanActAs right, what
 * the answer's format needs to be read (`reader`), request validation, then the ledger.
 */
export async function submitReassignment(
  runtime: LedgerRuntime,
  commands: ReassignmentCommands__Output | null,
  context: CallContext,
  reader?: Requirement,
): Promise<ReassignmentUpdate> {
  const submitter = commands?.submitter ? [commands.submitter] : [];
  await context.authorize({ kind: "own-user-id", userId: commands?.userId ?? "" });
  await context.authorize({ kind: "act-as", actAs: submitter, readAs: [] });
  if (reader !== undefined) await context.authorize(reader);
  const validated = validateReassignment(commands, context.caller.userId ?? "");
  return runtime.ledger.reassign(validated);
}

/**
 * Only a party this participant hosts with submission permission can be acted for by a plain
 * submission; an external party (hosted to confirm or observe) signs its own transactions
 * through the interactive submission service instead.
 */
function submittersMayBeActedFor(runtime: LedgerRuntime, actAs: readonly string[]): void {
  const { store } = runtime.ledger;
  const refused = actAs.filter((party) => {
    const permission = store.party(party)?.permissions.get(store.preferredSynchronizerId);
    return permission !== undefined && permission !== "PARTICIPANT_PERMISSION_SUBMISSION";
  });
  if (refused.length > 0) throw interactiveErrors.noSynchronizerForSubmitters(refused);
}
