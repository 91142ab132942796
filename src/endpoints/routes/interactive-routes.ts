import { isoToTimestamp } from "../../codec/index.js";
import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "interactive.InteractiveSubmissionService";
const TAG = "Interactive Submission";

/**
 * The interactive submission service: prepare a transaction for an external party to sign,
 * execute it with the party's signatures (the prepared transaction travels as base64 bytes,
 * rule `serialized` of the codec), and package preference.
 */
export function interactiveRoutes(deps: RouteDeps): Route[] {
  const post = (path: string, rpc: string, schema: string, responseSchema: string, summary: string) =>
    grpcRoute(deps, {
      method: "POST",
      path: `/v2/interactive-submission/${path}`,
      summary,
      tag: TAG,
      service: SERVICE,
      rpc,
      body: { kind: "json", schema },
      responseSchema,
    });
  return [
    post(
      "prepare",
      "PrepareSubmission",
      "JsPrepareSubmissionRequest",
      "JsPrepareSubmissionResponse",
      "Interpret commands into a transaction and its hash for the submitting parties to sign",
    ),
    post(
      "execute",
      "ExecuteSubmission",
      "JsExecuteSubmissionRequest",
      "ExecuteSubmissionResponse",
      "Execute a prepared transaction with the parties' signatures, asynchronously",
    ),
    post(
      "executeAndWait",
      "ExecuteSubmissionAndWait",
      "JsExecuteSubmissionAndWaitRequest",
      "ExecuteSubmissionAndWaitResponse",
      "Execute a prepared transaction with the parties' signatures and wait for its completion",
    ),
    post(
      "executeAndWaitForTransaction",
      "ExecuteSubmissionAndWaitForTransaction",
      "JsExecuteSubmissionAndWaitForTransactionRequest",
      "JsExecuteSubmissionAndWaitForTransactionResponse",
      "Execute a prepared transaction with the parties' signatures and answer the transaction",
    ),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/interactive-submission/preferred-package-version",
      summary: "The preferred package of a name for the given parties (deprecated: use preferred-packages)",
      tag: TAG,
      service: SERVICE,
      rpc: "GetPreferredPackageVersion",
      query: [
        { name: "parties", type: "string[]" },
        { name: "package-name", type: "string", required: true },
        { name: "vetting_valid_at", type: "date-time" },
        { name: "synchronizer-id", type: "string" },
      ],
      responseSchema: "GetPreferredPackageVersionResponse",
      availability: { deprecatedSince: "3.5.10", removedIn: "3.6.0" },
      toRequest: ({ query }) => {
        const validAt = query.vetting_valid_at;
        return {
          parties: (query.parties as string[] | undefined) ?? [],
          packageName: query["package-name"] ?? "",
          synchronizerId: query["synchronizer-id"] ?? "",
          vettingValidAt: typeof validAt === "string" ? (isoToTimestamp(validAt) ?? null) : null,
        };
      },
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/interactive-submission/preferred-packages",
      summary: "The preferred package of each package name for the given parties",
      tag: TAG,
      service: SERVICE,
      rpc: "GetPreferredPackages",
      body: { kind: "json", schema: "GetPreferredPackagesRequest" },
      responseSchema: "GetPreferredPackagesResponse",
    }),
  ];
}
