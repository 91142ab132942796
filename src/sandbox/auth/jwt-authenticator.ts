import type { Logger } from "pino";
import {
  createTokenVerifier,
  type TokenVerificationOptions,
  type TokenVerifier,
} from "../../jwt/token-verifier.js";
import { errors } from "../errors.js";
import { type AuthenticatedCaller, type Authenticator, bearerTokenOf } from "./authenticator.js";

/** An identity provider configuration as the auth step needs it. */
interface IssuerProvider {
  readonly identityProviderId: string;
  readonly isDeactivated: boolean;
}

export interface JwtAuthenticatorOptions {
  /** How tokens are verified; `issuer` is checked here (see below), not by the verifier. */
  readonly verification: TokenVerificationOptions;
  /** Identity provider configurations by issuer (Canton's IdentityProviderAwareAuthService). */
  readonly identityProviderOf?: (issuer: string) => IssuerProvider | undefined;
  readonly log: Logger;
}

/**
 * The sandbox's auth step: a bearer token verified as configured. Every failure is Canton's
 * UNAUTHENTICATED (redacted on the wire); the real reason goes to the log, the token never does.
 *
 * A token whose `iss` is an identity provider configuration's belongs to that provider: its
 * user is looked up there. (Canton verifies such tokens with the provider's JWKS URL; the
 * sandbox fetches nothing and verifies them with its own key and audience rules; the provider's
 * own audience is not checked.) Any other token must carry the
 * configured issuer, when one is configured.
 */
export function jwtAuthenticator(options: JwtAuthenticatorOptions): Authenticator {
  const { issuer, ...withoutIssuer } = options.verification;
  const verifier: TokenVerifier = createTokenVerifier(withoutIssuer);
  const reject = (reason: string) => {
    options.log.warn({ reason }, "Authorization error: token rejected");
    return errors.missingJwtToken();
  };
  return {
    async authenticate(metadata): Promise<AuthenticatedCaller> {
      const token = bearerTokenOf(metadata);
      if (token === undefined) throw reject("no bearer token");
      const result = await verifier.verify(token);
      if (!result.ok) throw reject(result.reason);
      const { claims } = result;
      const provider = claims.issuer === undefined ? undefined : options.identityProviderOf?.(claims.issuer);
      if (provider !== undefined) {
        if (provider.isDeactivated)
          throw reject(`identity provider ${provider.identityProviderId} is deactivated`);
      } else if (issuer !== undefined && claims.issuer !== issuer) {
        throw reject("The iss claim value is not allowed.");
      }
      return {
        token,
        claims: { ...claims },
        userId: claims.userId,
        ...(claims.participantId !== undefined ? { participantId: claims.participantId } : {}),
        ...(claims.expiresAt !== undefined ? { expiresAt: claims.expiresAt } : {}),
        ...(provider !== undefined ? { identityProviderId: provider.identityProviderId } : {}),
      };
    },
  };
}
