import { LEDGER_API_PACKAGE } from "../../proto/ledger-api-protos.js";
import { grpcRoute } from "../grpc-route.js";
import { transactionTree, wildcardTransactionFormat } from "../legacy-requests.js";
import type { RequestContext, Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const COMMANDS = "CommandService";
const SUBMISSION = "CommandSubmissionService";

export function commandRoutes(deps: RouteDeps): Route[] {
  /** A JsCommands body as the request's `commands`, so error paths start at the body's own fields. */
  const commandsRequest = async ({ body, token }: RequestContext) => ({
    commands: await deps.json.fromJson(`${LEDGER_API_PACKAGE}.Commands`, body, token),
  });
  return [
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/submit-and-wait",
      summary: "Submit a batch of commands and wait for the completion",
      tag: "Commands",
      service: COMMANDS,
      rpc: "SubmitAndWait",
      body: { kind: "json", schema: "JsCommands" },
      responseSchema: "SubmitAndWaitResponse",
      toRequest: commandsRequest,
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/submit-and-wait-for-transaction",
      summary: "Submit a batch of commands and wait for the transaction",
      tag: "Commands",
      service: COMMANDS,
      rpc: "SubmitAndWaitForTransaction",
      body: { kind: "json", schema: "JsSubmitAndWaitForTransactionRequest" },
      responseSchema: "JsSubmitAndWaitForTransactionResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/submit-and-wait-for-transaction-tree",
      summary: "Submit a batch of commands and wait for the transaction tree (deprecated)",
      tag: "Commands",
      service: COMMANDS,
      rpc: "SubmitAndWaitForTransaction",
      body: { kind: "json", schema: "JsCommands" },
      responseSchema: "JsSubmitAndWaitForTransactionTreeResponse",
      deprecated: true,
      // As Canton: every event the submitters see, in ledger-effects shape, then made a tree.
      toRequest: async ({ body }, fromJson) =>
        fromJson({
          commands: body,
          transactionFormat: wildcardTransactionFormat(
            ((body as { actAs?: string[] }).actAs ?? []).filter((p) => typeof p === "string"),
            "ledger-effects",
          ),
        }),
      toAnswer: (json) => ({
        transactionTree: transactionTree((json as { transaction: unknown }).transaction),
      }),
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/submit-and-wait-for-reassignment",
      summary: "Submit a reassignment and wait for it",
      tag: "Commands",
      service: COMMANDS,
      rpc: "SubmitAndWaitForReassignment",
      body: { kind: "json", schema: "SubmitAndWaitForReassignmentRequest" },
      responseSchema: "JsSubmitAndWaitForReassignmentResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/async/submit",
      summary: "Submit a batch of commands; the outcome arrives on the completion stream",
      tag: "Commands",
      service: SUBMISSION,
      rpc: "Submit",
      body: { kind: "json", schema: "JsCommands" },
      responseSchema: "SubmitResponse",
      toRequest: commandsRequest,
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/async/submit-reassignment",
      summary: "Submit a reassignment; the outcome arrives on the completion stream",
      tag: "Commands",
      service: SUBMISSION,
      rpc: "SubmitReassignment",
      body: { kind: "json", schema: "SubmitReassignmentRequest" },
      responseSchema: "SubmitReassignmentResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/commands/completion-by-hash",
      summary:
        "The accepted completion, if any, and the recent rejections of a prepared transaction, by the hash its parties signed",
      tag: "Commands",
      service: "CommandCompletionService",
      rpc: "GetCompletionByHash",
      body: { kind: "json", schema: "GetCompletionByHashRequest" },
      responseSchema: "GetCompletionByHashResponse",
      availability: { since: "3.6.0" },
    }),
  ];
}
