import type { ReassignmentCommands__Output } from "../../../proto/ledger-api-types.js";
import { errors } from "../../errors.js";
import { partyStringError, uniqueIdentifierError } from "../../identifiers.js";
import { type SubmissionIds, validateSubmissionIds } from "./submission-ids.js";

/**
 * A reassignment submission after request validation. Canton submits a batch of commands of
 * one kind between one source and one target as one reassignment.
 */
export interface ValidatedReassignment extends SubmissionIds {
  readonly submitter: string;
  readonly kind: "unassign" | "assign";
  readonly source: string;
  readonly target: string;
  /** Contract ids to unassign, or reassignment ids to assign. */
  readonly ids: readonly string[];
}

export function validateReassignment(
  message: ReassignmentCommands__Output | null,
  defaultUserId: string,
): ValidatedReassignment {
  if (message === null) throw errors.missingField("reassignment_commands");
  const submissionIds = validateSubmissionIds(message, defaultUserId);
  if (message.submitter === "") throw errors.missingField("submitter");
  const partyError = partyStringError(message.submitter);
  if (partyError !== undefined) throw errors.invalidField("submitter", partyError);
  if (message.commands.length === 0) throw errors.missingField("commands");
  const items = message.commands.map((command) => {
    if (command.command === "unassignCommand") {
      const c = command.unassignCommand!;
      if (c.contractId === "") throw errors.missingField("contract_id");
      return { kind: "unassign" as const, id: c.contractId, ...synchronizers(c) };
    }
    if (command.command === "assignCommand") {
      const c = command.assignCommand!;
      if (c.reassignmentId === "") throw errors.missingField("reassignment_id");
      return { kind: "assign" as const, id: c.reassignmentId, ...synchronizers(c) };
    }
    throw errors.missingField("command");
  });
  const first = items[0]!;
  if (items.some((i) => i.kind !== first.kind || i.source !== first.source || i.target !== first.target)) {
    throw errors.invalidArgument(
      "Reassignment commands of one submission must all unassign or all assign, between the same source and target",
    );
  }
  return {
    ...submissionIds,
    submitter: message.submitter,
    kind: first.kind,
    source: first.source,
    target: first.target,
    ids: items.map((i) => i.id),
  };
}

function synchronizers(command: { source: string; target: string }) {
  for (const field of ["source", "target"] as const) {
    const value = command[field];
    if (value === "") throw errors.missingField(field);
    const error = uniqueIdentifierError(value);
    if (error !== undefined) throw errors.invalidField(field, error);
  }
  return { source: command.source, target: command.target };
}
