import type { HttpMethod } from "./route.js";

/** Canton's operation ids: `getV2PartiesParticipant-id`, `patchV2PartiesParty`. */
export function operationId(method: HttpMethod, path: string): string {
  const segments = path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => s.replace(/^\{(.+)\}$/, "$1"))
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1));
  return method.toLowerCase() + segments.join("");
}
