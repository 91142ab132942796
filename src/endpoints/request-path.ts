/**
 * A request's path with empty segments skipped, as Canton's HTTP layer reads paths: clients that
 * join an origin ending in a slash with a path starting with one send `//v2/updates`, and
 * Canton serves it. The HTTP routes and the WebSocket upgrades both look paths up this way.
 */
export function canonicalPath(path: string): string {
  return path.includes("//") ? path.replace(/\/{2,}/g, "/") : path;
}
