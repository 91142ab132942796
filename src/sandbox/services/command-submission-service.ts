import type {
  SubmitReassignmentRequest__Output,
  SubmitRequest__Output,
  SubmitResponse,
} from "../../proto/ledger-api-types.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { submitCommands, submitReassignment } from "../ledger/submission.js";

/**
 * CommandSubmissionService: asynchronous submission. Validation and interpretation errors fail
 * the call (as on Canton); the outcome of an accepted submission, success or a later rejection
 * such as DUPLICATE_COMMAND, shows in the completion stream and, if committed, in the updates.
 */
export function commandSubmissionService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.CommandSubmissionService",
    unary: {
      Submit: async (request: SubmitRequest__Output, context): Promise<SubmitResponse> => {
        await submitCommands(runtime, request.commands, context);
        return {};
      },
      SubmitReassignment: async (request: SubmitReassignmentRequest__Output, context) => {
        await submitReassignment(runtime, request.reassignmentCommands, context);
        return {};
      },
    },
  };
}
