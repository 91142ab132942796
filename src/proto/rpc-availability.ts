import { type ApiVersion, type Availability, availableIn } from "./api-version.js";

/**
 * The gRPC methods that not every known release has, by `Service/Method` (the service relative
 * to `com.daml.ledger.api.v2`, as in LedgerApiProtos.method). protos/ holds the union of the
 * releases' files (protos/VERSIONS.md says what differs); a method not listed here is in every
 * known release. A participant of a release without a method answers UNIMPLEMENTED for it, and
 * so does the sandbox started as that release.
 */
export const RPC_AVAILABILITY: Readonly<Record<string, Availability>> = {
  "CommandCompletionService/GetCompletions": { since: "3.5.10" },
  "CommandCompletionService/GetCompletionByHash": { since: "3.6.0" },
  "UpdateService/GetUpdateByHash": { since: "3.6.0" },
  "JoseService/GetJwks": { since: "3.6.0" },
  "admin.PartyManagementAlphaService/ExportPartyAcs": { since: "3.6.0" },
  "admin.PartyManagementAlphaService/AddPartyWithAcs": { since: "3.6.0" },
  "admin.PartyManagementAlphaService/GetAddPartyStatus": { since: "3.6.0" },
  "interactive.InteractiveSubmissionService/GetPreferredPackageVersion": { removedIn: "3.6.0" },
};

/** Whether a participant of `version` has the method `service/rpc` (service relative to the package). */
export function rpcAvailableIn(service: string, rpc: string, version: ApiVersion): boolean {
  return availableIn(RPC_AVAILABILITY[`${service}/${rpc}`], version);
}
