import { invalidArgumentError } from "../../errors/index.js";
import type { UpdateIdentityProviderConfigRequest } from "../../proto/ledger-api-types.js";
import { grpcRoute } from "../grpc-route.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "admin.IdentityProviderConfigService";
const TAG = "Identity Provider Config";
const IDP_ID = [{ name: "idp-id", type: "string" as const }];

/** The identity provider configuration endpoints (Canton's JsIdentityProviderService). */
export function idpRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/idps",
      summary: "List all identity provider configurations",
      tag: TAG,
      service: SERVICE,
      rpc: "ListIdentityProviderConfigs",
      responseSchema: "ListIdentityProviderConfigsResponse",
      toRequest: () => ({}),
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/idps",
      summary: "Create an identity provider configuration",
      tag: TAG,
      service: SERVICE,
      rpc: "CreateIdentityProviderConfig",
      body: { kind: "json", schema: "CreateIdentityProviderConfigRequest" },
      responseSchema: "CreateIdentityProviderConfigResponse",
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/idps/{idp-id}",
      summary: "Get an identity provider configuration",
      tag: TAG,
      service: SERVICE,
      rpc: "GetIdentityProviderConfig",
      pathParams: IDP_ID,
      responseSchema: "GetIdentityProviderConfigResponse",
      toRequest: ({ path }) => ({ identityProviderId: path["idp-id"] }),
    }),
    grpcRoute<UpdateIdentityProviderConfigRequest>(deps, {
      method: "PATCH",
      path: "/v2/idps/{idp-id}",
      summary: "Update an identity provider configuration",
      tag: TAG,
      service: SERVICE,
      rpc: "UpdateIdentityProviderConfig",
      pathParams: IDP_ID,
      body: { kind: "json", schema: "UpdateIdentityProviderConfigRequest" },
      responseSchema: "UpdateIdentityProviderConfigResponse",
      toRequest: async ({ path, body }, fromJson) => {
        const request = await fromJson(body);
        const inBody = request.identityProviderConfig?.identityProviderId;
        if (inBody !== path["idp-id"]) {
          throw invalidArgumentError(
            `${path["idp-id"]} does not match idp in body: ${inBody === undefined ? "None" : `Some(${inBody})`}`,
          );
        }
        return request;
      },
    }),
    grpcRoute(deps, {
      method: "DELETE",
      path: "/v2/idps/{idp-id}",
      summary: "Delete an identity provider configuration",
      tag: TAG,
      service: SERVICE,
      rpc: "DeleteIdentityProviderConfig",
      pathParams: IDP_ID,
      responseSchema: "DeleteIdentityProviderConfigResponse",
      toRequest: ({ path }) => ({ identityProviderId: path["idp-id"] }),
    }),
  ];
}
