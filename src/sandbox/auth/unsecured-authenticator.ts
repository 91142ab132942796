import { type Logger, pino } from "pino";
import type { Authenticator } from "./authenticator.js";
import { jwtAuthenticator } from "./jwt-authenticator.js";

/**
 * The unsecured development ledger: any signature is accepted, but a well-formed, signed,
 * unexpired Ledger API token is still required (as on Canton's sandbox, where any secret signs
 * it), and its user's rights still decide what it may do.
 */
export function unsecuredAuthenticator(log: Logger = pino({ level: "silent" })): Authenticator {
  return jwtAuthenticator({ verification: { mode: "unsafe" }, log });
}
