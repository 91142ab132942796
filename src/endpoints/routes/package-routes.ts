import { sha256Hex } from "../../lf/index.js";
import type { Availability } from "../../proto/api-version.js";
import type { GetPackageResponse__Output } from "../../proto/ledger-api-types.js";
import { grpcRoute } from "../grpc-route.js";
import { operationId } from "../operation-id.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const PACKAGES = "PackageService";
const MANAGEMENT = "admin.PackageManagementService";
const TAG = "Packages";
const PACKAGE_ID = [{ name: "package-id", type: "string" as const }];
const OCTET_STREAM = { kind: "bytes", contentType: "application/octet-stream" } as const;

/** Packages, DARs and vetting: Canton's JsPackageService endpoints. */
export function packageRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/packages",
      summary: "The ids of all packages the participant knows",
      tag: TAG,
      service: PACKAGES,
      rpc: "ListPackages",
      responseSchema: "ListPackagesResponse",
      toRequest: () => ({}),
    }),
    darUpload(deps, "/v2/dars", "Upload a DAR to the participant node", false),
    darUpload(deps, "/v2/packages", "Upload a DAR (same as /v2/dars; to be deprecated)", true),
    {
      method: "POST",
      path: "/v2/dars/validate",
      operationId: operationId("POST", "/v2/dars/validate"),
      summary: "Check a DAR and the upgrade compatibility of its packages, without storing or vetting it",
      tag: TAG,
      query: [{ name: "synchronizerId", type: "string" }],
      body: OCTET_STREAM,
      response: { kind: "empty" },
      auth: "token",
      handle: async ({ body, query, token, trace }) => {
        const request = { darFile: body ?? Buffer.alloc(0), synchronizerId: query.synchronizerId ?? "" };
        await deps.ledger.unary(MANAGEMENT, "ValidateDarFile", request, token, { trace });
        // Canton's endpoint declares no output; every 2xx JSON answer of ours carries a body,
        // so clients that parse every answer (Canton's TypeScript client does) get `{}`.
        return { kind: "json", body: {} };
      },
    },
    {
      method: "GET",
      path: "/v2/packages/{package-id}",
      operationId: operationId("GET", "/v2/packages/{package-id}"),
      summary: "The archive payload of a package; its SHA-256 is the package id",
      tag: TAG,
      pathParams: PACKAGE_ID,
      response: { kind: "bytes" },
      auth: "token",
      handle: async ({ path, token, trace }) => {
        const response = await deps.ledger.unary<GetPackageResponse__Output>(
          PACKAGES,
          "GetPackage",
          { packageId: path["package-id"] },
          token,
          { trace },
        );
        // The description's header name and the one Canton's clients read carry the same hash.
        const hash = sha256Hex(response.archivePayload);
        return {
          kind: "bytes",
          body: response.archivePayload,
          headers: { "Ledger-Package-Hash": hash, "Canton-Package-Hash": hash },
        };
      },
    },
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/packages/{package-id}/status",
      summary: "Whether the participant knows the package",
      tag: TAG,
      service: PACKAGES,
      rpc: "GetPackageStatus",
      pathParams: PACKAGE_ID,
      responseSchema: "GetPackageStatusResponse",
      toRequest: ({ path }) => ({ packageId: path["package-id"] }),
    }),
    ...vettingRoutes(deps),
  ];
}

function darUpload(deps: RouteDeps, path: string, summary: string, deprecated: boolean): Route {
  return {
    method: "POST",
    path,
    operationId: operationId("POST", path),
    summary,
    tag: TAG,
    query: [
      { name: "vetAllPackages", type: "boolean" },
      { name: "synchronizerId", type: "string" },
    ],
    body: OCTET_STREAM,
    response: { kind: "json", schema: "UploadDarFileResponse" },
    auth: "token",
    ...(deprecated ? { deprecated: true } : {}),
    handle: async ({ body, query, token, trace }) => {
      const request = {
        darFile: body ?? Buffer.alloc(0),
        // As Canton's JSON API: vetting unless vetAllPackages=false.
        vettingChange:
          query.vetAllPackages === false
            ? "VETTING_CHANGE_DONT_VET_ANY_PACKAGES"
            : "VETTING_CHANGE_VET_ALL_PACKAGES",
        synchronizerId: query.synchronizerId ?? "",
      };
      await deps.ledger.unary(MANAGEMENT, "UploadDarFile", request, token, { trace });
      return { kind: "json", body: {} };
    },
  };
}

const REMOVED_IN_3_6: Availability = { removedIn: "3.6.0" };

function vettingRoutes(deps: RouteDeps): Route[] {
  const list = (method: "GET" | "POST", path: string, deprecated: boolean, availability?: Availability) =>
    grpcRoute(deps, {
      method,
      path,
      summary: "Which participant vetted which packages on which synchronizer",
      tag: "Package Vetting",
      service: PACKAGES,
      rpc: "ListVettedPackages",
      body: { kind: "json", schema: "ListVettedPackagesRequest" },
      responseSchema: "ListVettedPackagesResponse",
      deprecated,
      ...(availability ? { availability } : {}),
    });
  const update = (path: string, deprecated: boolean, availability?: Availability) =>
    grpcRoute(deps, {
      method: "POST",
      path,
      summary: "Vet or unvet packages of this participant",
      tag: "Package Vetting",
      service: MANAGEMENT,
      rpc: "UpdateVettedPackages",
      body: { kind: "json", schema: "UpdateVettedPackagesRequest" },
      responseSchema: "UpdateVettedPackagesResponse",
      deprecated,
      ...(availability ? { availability } : {}),
    });
  return [
    // Deprecated GET with a JSON body, as Canton 3.5 still serves it; 3.6 has the /list and /update forms only.
    list("GET", "/v2/package-vetting", true, REMOVED_IN_3_6),
    update("/v2/package-vetting", true, REMOVED_IN_3_6),
    list("POST", "/v2/package-vetting/list", false),
    update("/v2/package-vetting/update", false),
  ];
}
