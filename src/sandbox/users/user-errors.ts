import { ERROR_CATEGORIES } from "../../proto/error-categories.js";
import { CONTEXTUALIZED, errorCode as code, resource, SandboxError } from "../sandbox-error.js";

/**
 * Error codes and texts of user and identity provider management, as Canton 3.5 defines them
 * (UserManagementServiceErrors, IdentityProviderConfigServiceErrors, AuthorizationChecksErrors,
 * RequestValidationErrors.UnknownResource). Kept beside the services that raise them.
 */
const USER_ERROR_CODES = {
  USER_NOT_FOUND: code("USER_NOT_FOUND", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing),
  USER_ALREADY_EXISTS: code(
    "USER_ALREADY_EXISTS",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  INVALID_USER_UPDATE_REQUEST: code(
    "INVALID_USER_UPDATE_REQUEST",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  CONCURRENT_USER_UPDATE_DETECTED: code(
    "CONCURRENT_USER_UPDATE_DETECTED",
    ERROR_CATEGORIES.ContentionOnSharedResources,
  ),
  MAX_USER_ANNOTATIONS_SIZE_EXCEEDED: code(
    "MAX_USER_ANNOTATIONS_SIZE_EXCEEDED",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  TOO_MANY_USER_RIGHTS: code("TOO_MANY_USER_RIGHTS", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther),
  IDP_CONFIG_NOT_FOUND: code(
    "IDP_CONFIG_NOT_FOUND",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing,
  ),
  IDP_CONFIG_ALREADY_EXISTS: code(
    "IDP_CONFIG_ALREADY_EXISTS",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  IDP_CONFIG_ISSUER_ALREADY_EXISTS: code(
    "IDP_CONFIG_ISSUER_ALREADY_EXISTS",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceExists,
  ),
  INVALID_IDENTITY_PROVIDER_UPDATE_REQUEST: code(
    "INVALID_IDENTITY_PROVIDER_UPDATE_REQUEST",
    ERROR_CATEGORIES.InvalidIndependentOfSystemState,
  ),
  TOO_MANY_IDENTITY_PROVIDER_CONFIGS: code(
    "TOO_MANY_IDENTITY_PROVIDER_CONFIGS",
    ERROR_CATEGORIES.InvalidGivenCurrentSystemStateOther,
  ),
  /** RequestValidationErrors.UnknownResource: parties named in rights that the idp does not know. */
  NOT_FOUND: code("NOT_FOUND", ERROR_CATEGORIES.InvalidGivenCurrentSystemStateResourceMissing),
  /** AuthorizationChecksErrors.InvalidToken: a request that needs a user id the token lacks. */
  INVALID_TOKEN: code("INVALID_TOKEN", ERROR_CATEGORIES.InvalidIndependentOfSystemState),
} as const;

export const userErrors = {
  userNotFound: (operation: string, userId: string) =>
    new SandboxError(
      USER_ERROR_CODES.USER_NOT_FOUND,
      `${operation} failed for unknown user "${userId}"`,
      resource("USER", userId),
    ),
  userAlreadyExists: (operation: string, userId: string) =>
    new SandboxError(
      USER_ERROR_CODES.USER_ALREADY_EXISTS,
      `${operation} failed, as user "${userId}" already exists`,
      resource("USER", userId),
    ),
  invalidUserUpdate: (userId: string, reason: string) =>
    new SandboxError(
      USER_ERROR_CODES.INVALID_USER_UPDATE_REQUEST,
      `Update operation for user id '${userId}' failed due to: ${reason}`,
      { ...resource("USER", userId), ...CONTEXTUALIZED },
    ),
  concurrentUserUpdate: (userId: string) =>
    new SandboxError(
      USER_ERROR_CODES.CONCURRENT_USER_UPDATE_DETECTED,
      `Update operation for user '${userId}' failed due to a concurrent update to the same user`,
      { ...resource("USER", userId), ...CONTEXTUALIZED },
    ),
  maxUserAnnotationsSizeExceeded: (userId: string) =>
    new SandboxError(
      USER_ERROR_CODES.MAX_USER_ANNOTATIONS_SIZE_EXCEEDED,
      `Maximum annotations size for user '${userId}' has been exceeded`,
      { ...resource("USER", userId), ...CONTEXTUALIZED },
    ),
  tooManyUserRights: (operation: string, userId: string) =>
    new SandboxError(
      USER_ERROR_CODES.TOO_MANY_USER_RIGHTS,
      `${operation} failed, as user "${userId}" would have too many rights.`,
      resource("USER", userId),
    ),
  partiesNotFound: (parties: readonly string[], identityProviderId: string) =>
    new SandboxError(
      USER_ERROR_CODES.NOT_FOUND,
      `Provided parties have not been found in identity_provider_id=\`${identityProviderId}\`: [${parties.join(",")}].`,
      // Canton names the resource PARTIES; the sandbox's resource type list has only PARTY.
      { resources: parties.map((party) => ["PARTY", party] as const) },
    ),
  idpNotFound: (operation: string, id: string) =>
    new SandboxError(
      USER_ERROR_CODES.IDP_CONFIG_NOT_FOUND,
      `${operation} failed for unknown identity provider id="${id}"`,
      resource("IDENTITY_PROVIDER_CONFIG", id),
    ),
  idpAlreadyExists: (operation: string, id: string) =>
    new SandboxError(
      USER_ERROR_CODES.IDP_CONFIG_ALREADY_EXISTS,
      `${operation} failed, as identity provider "${id}" already exists`,
      resource("IDENTITY_PROVIDER_CONFIG", id),
    ),
  idpIssuerAlreadyExists: (operation: string, issuer: string) =>
    new SandboxError(
      USER_ERROR_CODES.IDP_CONFIG_ISSUER_ALREADY_EXISTS,
      `${operation} failed, as identity provider with issuer "${issuer}" already exists`,
      resource("IDENTITY_PROVIDER_CONFIG", issuer),
    ),
  invalidIdpUpdate: (id: string, reason: string) =>
    new SandboxError(
      USER_ERROR_CODES.INVALID_IDENTITY_PROVIDER_UPDATE_REQUEST,
      `Update operation for identity provider config '${id}' failed due to: ${reason}`,
      { ...resource("IDENTITY_PROVIDER_CONFIG", id), ...CONTEXTUALIZED },
    ),
  tooManyIdps: (operation: string) =>
    new SandboxError(USER_ERROR_CODES.TOO_MANY_IDENTITY_PROVIDER_CONFIGS, `${operation} failed.`),
  missingUserId: (reason: string) =>
    new SandboxError(USER_ERROR_CODES.INVALID_TOKEN, `The submitted request is missing a user-id: ${reason}`),
  invalidTokenField: (fieldName: string, message: string) =>
    new SandboxError(
      USER_ERROR_CODES.INVALID_TOKEN,
      `The submitted token has a field with invalid value: Invalid field ${fieldName}: ${message}`,
    ),
};
