import { deepStrictEqual, match, notStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { validateSubmissionIds } from "../../../../src/sandbox/ledger/commands/submission-ids.js";
import { SandboxError } from "../../../../src/sandbox/sandbox-error.js";

const ids = { userId: "alice-user", commandId: "cmd-1", submissionId: "sub-1", workflowId: "wf-1" };

function refusal(message: typeof ids, defaultUserId = ""): [string, string] {
  try {
    validateSubmissionIds(message, defaultUserId);
  } catch (error) {
    if (error instanceof SandboxError) return [error.code.id, error.cause];
    throw error;
  }
  throw new Error("the ids were accepted");
}

describe("validateSubmissionIds", () => {
  it("keeps the ids a request gives", () => {
    deepStrictEqual(validateSubmissionIds(ids, "token-user"), ids);
  });

  it("takes the token's user when the request names none, and makes a fresh submission id", () => {
    const first = validateSubmissionIds({ ...ids, userId: "", submissionId: "" }, "token-user");
    const second = validateSubmissionIds({ ...ids, userId: "", submissionId: "" }, "token-user");
    strictEqual(first.userId, "token-user");
    match(first.submissionId, /^[0-9a-f-]{36}$/);
    notStrictEqual(first.submissionId, second.submissionId);
  });

  it("refuses a missing user id, a missing command id and an invalid workflow id, in Canton's wording", () => {
    deepStrictEqual(refusal({ ...ids, userId: "" }), [
      "MISSING_FIELD",
      "The submitted command is missing a mandatory field: user_id",
    ]);
    deepStrictEqual(refusal({ ...ids, commandId: "" }), [
      "MISSING_FIELD",
      "The submitted command is missing a mandatory field: command_id",
    ]);
    const [code, cause] = refusal({ ...ids, workflowId: "bad id!" });
    strictEqual(code, "INVALID_FIELD");
    match(cause, /^The submitted command has a field with invalid value: Invalid field workflow_id: /);
  });
});
