import type {
  SubmitAndWaitForTransactionRequest__Output,
  SubmitAndWaitForTransactionResponse,
  SubmitAndWaitRequest__Output,
  SubmitAndWaitResponse,
} from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { CompiledEventFormat } from "../ledger/reads/event-format.js";
import { projectTransaction, transactionMessage } from "../ledger/reads/transaction-projection.js";
import { compileTransactionFormat } from "../ledger/reads/update-format.js";
import { submitCommands } from "../ledger/submission.js";

/**
 * CommandService: submit and wait for the outcome. The sandbox commits synchronously, so
 * "waiting" is the submission itself; a rejection recorded at an offset (DUPLICATE_COMMAND)
 * fails the call with the same status its completion carries.
 */
export function commandService(runtime: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.CommandService",
    unary: {
      SubmitAndWait: async (
        request: SubmitAndWaitRequest__Output,
        context,
      ): Promise<SubmitAndWaitResponse> => {
        const outcome = await submitCommands(runtime, request.commands, context);
        if (outcome.kind === "rejected") throw outcome.error;
        return { updateId: outcome.update.updateId, completionOffset: outcome.update.offset };
      },
      SubmitAndWaitForTransaction: async (
        request: SubmitAndWaitForTransactionRequest__Output,
        context,
      ): Promise<SubmitAndWaitForTransactionResponse> => {
        // Validate the format before anything is committed.
        const format =
          request.transactionFormat === null
            ? undefined
            : compileTransactionFormat(runtime.registry, request.transactionFormat, "transaction_format");
        const outcome = await submitCommands(runtime, request.commands, context);
        if (outcome.kind === "rejected") throw outcome.error;
        const tx = outcome.update;
        // Canton 3.3+: without a format, ACS_DELTA with a wildcard for all actAs and readAs, verbose.
        const effective = format ?? {
          shape: "ACS_DELTA" as const,
          events: CompiledEventFormat.wildcard(
            runtime.registry,
            [...(tx.completion?.actAs ?? []), ...outcome.readAs],
            true,
          ),
        };
        return {
          transaction:
            projectTransaction(tx, effective, runtime.events) ?? transactionMessage(tx, effective.events, []),
        };
      },
      SubmitAndWaitForReassignment: () => {
        throw errors.unsupported(
          "com.daml.ledger.api.v2.CommandService/SubmitAndWaitForReassignment (the sandbox has a single synchronizer: nothing to reassign)",
        );
      },
    },
  };
}
