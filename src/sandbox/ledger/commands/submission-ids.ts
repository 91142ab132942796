import { randomUUID } from "node:crypto";
import type { Commands__Output } from "../../../proto/ledger-api-types.js";
import { errors } from "../../errors.js";
import { ledgerStringError, userIdError } from "../../identifiers.js";

/** The ids a command submission and a reassignment submission both carry. */
export interface SubmissionIds {
  readonly userId: string;
  readonly commandId: string;
  readonly submissionId: string;
  readonly workflowId: string;
}

/**
 * Validates the ids of a command or reassignment submission, in Canton's order and wording: the
 * user id defaults to the token's user (`defaultUserId`), the submission id to a fresh one; the
 * command id is required, the workflow id optional.
 */
export function validateSubmissionIds(
  message: Pick<Commands__Output, keyof SubmissionIds>,
  defaultUserId: string,
): SubmissionIds {
  const userId = message.userId !== "" ? message.userId : defaultUserId;
  if (userId === "") throw errors.missingField("user_id");
  const userError = userIdError(userId);
  if (userError !== undefined) throw errors.invalidField("user_id", userError);
  if (message.commandId === "") throw errors.missingField("command_id");
  checkLedgerString("command_id", message.commandId);
  if (message.submissionId !== "") checkLedgerString("submission_id", message.submissionId);
  if (message.workflowId !== "") checkLedgerString("workflow_id", message.workflowId);
  return {
    userId,
    commandId: message.commandId,
    submissionId: message.submissionId !== "" ? message.submissionId : randomUUID(),
    workflowId: message.workflowId,
  };
}

function checkLedgerString(field: string, value: string): void {
  const error = ledgerStringError(value);
  if (error !== undefined) throw errors.invalidField(field, error);
}
