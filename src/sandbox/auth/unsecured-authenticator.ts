import { createDecoder } from "fast-jwt";
import { errors } from "../errors.js";
import { type AuthenticatedCaller, type Authenticator, bearerTokenOf } from "./authenticator.js";

/**
 * An unsecured development ledger: a decodable JWT is still required (as on Canton's sandbox,
 * where any secret signs it), but neither signature nor expiry is checked.
 */
export function unsecuredAuthenticator(): Authenticator {
  const decode = createDecoder({ complete: false });
  return {
    async authenticate(metadata): Promise<AuthenticatedCaller> {
      const token = bearerTokenOf(metadata);
      if (token === undefined) throw errors.missingJwtToken();
      let payload: unknown;
      try {
        payload = decode(token);
      } catch {
        throw errors.missingJwtToken();
      }
      if (typeof payload !== "object" || payload === null) throw errors.missingJwtToken();
      const claims = payload as Record<string, unknown>;
      return typeof claims.sub === "string" ? { token, claims, userId: claims.sub } : { token, claims };
    },
  };
}
