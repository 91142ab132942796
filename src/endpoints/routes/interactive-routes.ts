import { isoToTimestamp } from "../../codec/index.js";
import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "interactive.InteractiveSubmissionService";
const TAG = "Interactive Submission";

/**
 * Package preference of the interactive submission service. Prepare and execute are not
 * served yet (the sandbox has no interactive submission).
 */
export function interactiveRoutes(deps: RouteDeps): Route[] {
  return [
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
      deprecated: true,
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
