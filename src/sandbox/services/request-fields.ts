import { errors } from "../errors.js";
import { ledgerStringError } from "../identifiers.js";

/** Checks of request fields that party and user management share, in Canton's wording. */

export function optionalIdentityProviderId(id: string, fieldName = "identity_provider_id"): string {
  const error = id === "" ? undefined : ledgerStringError(id);
  if (error !== undefined) throw errors.invalidField(fieldName, error);
  return id;
}

export function identityProviderMustExist(exists: (id: string) => boolean, id: string): void {
  // Canton prints the Scala value of the id here, hence `Id(...)`.
  if (!exists(id))
    throw errors.invalidArgument(`Provided identity_provider_id Id(${id}) has not been found.`);
}

/** ObjectMeta.resource_version: Canton parses a Java long; the sandbox's stay far below 2^53. */
export function parseResourceVersion(raw: string, fieldName: string): number {
  if (!/^[+-]?\d{1,18}$/.test(raw)) throw errors.invalidField(fieldName, "Invalid resource version number");
  return Number(raw);
}
