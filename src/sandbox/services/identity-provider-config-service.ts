import type {
  CreateIdentityProviderConfigRequest__Output,
  CreateIdentityProviderConfigResponse,
  DeleteIdentityProviderConfigRequest__Output,
  DeleteIdentityProviderConfigResponse,
  GetIdentityProviderConfigRequest__Output,
  GetIdentityProviderConfigResponse,
  ListIdentityProviderConfigsResponse,
  UpdateIdentityProviderConfigRequest__Output,
  UpdateIdentityProviderConfigResponse,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { ledgerStringError } from "../identifiers.js";
import { isUpdateMaskError, parseUpdateMask, updateMaskErrorReason } from "../update-mask.js";
import type {
  IdentityProviderChange,
  IdentityProviderRecord,
  IdentityProviderStore,
} from "../users/identity-provider-store.js";
import { userErrors } from "../users/user-errors.js";

/** The fields an update mask may name (Canton's IdentityProviderConfigPaths). */
const UPDATABLE_FIELDS = [
  "identity_provider_id",
  "is_deactivated",
  "jwks_url",
  "issuer",
  "audience",
] as const;

/**
 * IdentityProviderConfigService: every method needs ParticipantAdmin
 * (IdentityProviderConfigServiceAuthorization); validation and errors as
 * ApiIdentityProviderConfigService.
 */
export function identityProviderConfigService(idps: IdentityProviderStore): ServiceImplementation {
  const admin = (context: CallContext) => context.authorize({ kind: "admin" });
  return {
    serviceName: "com.daml.ledger.api.v2.admin.IdentityProviderConfigService",
    unary: {
      CreateIdentityProviderConfig: async (
        request: CreateIdentityProviderConfigRequest__Output,
        context: CallContext,
      ): Promise<CreateIdentityProviderConfigResponse> => {
        await admin(context);
        const config = request.identityProviderConfig;
        if (config === null) throw errors.missingField("identity_provider_config");
        const record: IdentityProviderRecord = {
          identityProviderId: requireIdpId(config.identityProviderId),
          isDeactivated: config.isDeactivated,
          jwksUrl: requireJwksUrl(config.jwksUrl),
          issuer: requireNonEmpty(config.issuer, "issuer"),
          audience: config.audience,
        };
        return { identityProviderConfig: idps.create(record, "creating identity provider config") };
      },
      GetIdentityProviderConfig: async (
        request: GetIdentityProviderConfigRequest__Output,
        context: CallContext,
      ): Promise<GetIdentityProviderConfigResponse> => {
        await admin(context);
        const id = requireIdpId(request.identityProviderId);
        return { identityProviderConfig: idps.get(id, "getting identity provider config") };
      },
      UpdateIdentityProviderConfig: async (
        request: UpdateIdentityProviderConfigRequest__Output,
        context: CallContext,
      ): Promise<UpdateIdentityProviderConfigResponse> => {
        await admin(context);
        const config = request.identityProviderConfig;
        if (config === null) throw errors.missingField("identity_provider_config");
        const id = requireIdpId(config.identityProviderId);
        const jwksUrl = config.jwksUrl === "" ? undefined : requireJwksUrl(config.jwksUrl);
        const issuer = config.issuer === "" ? undefined : config.issuer;
        if (request.updateMask === null) throw errors.missingField("update_mask");
        const mask = parseUpdateMask(request.updateMask.paths, UPDATABLE_FIELDS);
        if (isUpdateMaskError(mask)) throw userErrors.invalidIdpUpdate(id, updateMaskErrorReason(mask));
        // Exact matches update even to the default; an empty URL or issuer is no value at all.
        const exact = (field: string) => mask.match(field) === "exact";
        const change: IdentityProviderChange = {
          ...(exact("is_deactivated") ? { isDeactivated: config.isDeactivated } : {}),
          ...(exact("jwks_url") && jwksUrl !== undefined ? { jwksUrl } : {}),
          ...(exact("issuer") && issuer !== undefined ? { issuer } : {}),
          ...(exact("audience") ? { audience: config.audience } : {}),
        };
        return { identityProviderConfig: idps.update(id, change, "updating identity provider config") };
      },
      ListIdentityProviderConfigs: async (
        _request: object,
        context: CallContext,
      ): Promise<ListIdentityProviderConfigsResponse> => {
        await admin(context);
        return { identityProviderConfigs: idps.list() };
      },
      DeleteIdentityProviderConfig: async (
        request: DeleteIdentityProviderConfigRequest__Output,
        context: CallContext,
      ): Promise<DeleteIdentityProviderConfigResponse> => {
        await admin(context);
        idps.delete(requireIdpId(request.identityProviderId), "deleting identity provider config");
        return {};
      },
    },
  };
}

function requireNonEmpty(value: string, fieldName: string): string {
  if (value === "") throw errors.missingField(fieldName);
  return value;
}

function requireIdpId(id: string): string {
  requireNonEmpty(id, "identity_provider_id");
  const error = ledgerStringError(id);
  if (error !== undefined) throw errors.invalidField("identity_provider_id", error);
  return id;
}

/** Canton parses it as a java.net.URL: an absolute URL with a known scheme. */
function requireJwksUrl(url: string): string {
  requireNonEmpty(url, "jwks_url");
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !["http:", "https:", "file:", "ftp:", "jar:"].includes(parsed.protocol))
    throw errors.invalidField(
      "jwks_url",
      `Malformed URL: ${parsed === undefined ? "URI is not absolute" : `unknown protocol: ${parsed.protocol.slice(0, -1)}`}`,
    );
  return url;
}
