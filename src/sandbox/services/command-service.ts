import type {
  SubmitAndWaitForReassignmentRequest__Output,
  SubmitAndWaitForReassignmentResponse,
  SubmitAndWaitForTransactionRequest__Output,
  SubmitAndWaitForTransactionResponse,
  SubmitAndWaitRequest__Output,
  SubmitAndWaitResponse,
} from "../../proto/ledger-api-types.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { CompiledEventFormat } from "../ledger/reads/event-format.js";
import { projectReassignment } from "../ledger/reads/reassignment-projection.js";
import { projectTransaction, transactionMessage } from "../ledger/reads/transaction-projection.js";
import { compileTransactionFormat } from "../ledger/reads/update-format.js";
import { submitCommands, submitReassignment } from "../ledger/submission.js";
import { timestamp } from "../protocol-values.js";

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
        // Canton's getSubmitAndWaitForTransactionClaims: the format's parties must be readable too.
        const outcome = await submitCommands(
          runtime,
          request.commands,
          context,
          format?.events.requirement(),
        );
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
      SubmitAndWaitForReassignment: async (
        request: SubmitAndWaitForReassignmentRequest__Output,
        context,
      ): Promise<SubmitAndWaitForReassignmentResponse> => {
        const format =
          request.eventFormat === null
            ? undefined
            : CompiledEventFormat.compile(runtime.registry, request.eventFormat, "event_format");
        // Canton asks for the event format's read rights besides the submitter's act-as right.
        const update = await submitReassignment(
          runtime,
          request.reassignmentCommands,
          context,
          format?.requirement(),
        );
        // Without an event format the reassignment comes without events (Canton's contract).
        const projected = format && projectReassignment(update, format, runtime.events);
        return {
          reassignment: projected ?? {
            updateId: update.updateId,
            commandId: update.completion.commandId,
            workflowId: update.workflowId,
            offset: update.offset,
            events: [],
            traceContext: null,
            recordTime: timestamp(update.recordTime),
            synchronizerId: update.synchronizerId,
          },
        };
      },
    },
  };
}
