import type { HttpMethod, Route } from "../endpoints/route.js";
import type { Availability } from "../proto/api-version.js";
import type { Served } from "../proto/served-api-version.js";

export type Match =
  | { kind: "found"; route: Route; path: Record<string, string> }
  | { kind: "method-not-allowed"; allowed: HttpMethod[] }
  /** A route of another Canton release than the one served: answered as that release's Canton answers an unknown path. */
  | { kind: "not-in-release"; route: Route }
  /** A route some releases have, while the release served is not known yet. */
  | { kind: "release-unknown"; route: Route }
  | { kind: "not-found" };

/** Whether the Canton release served has what `availability` marks (ServedApiVersion.serves). */
export type ServedNow = (availability: Availability | undefined) => Served;

interface Compiled {
  route: Route;
  regex: RegExp;
  names: string[];
  /** Literal segments win over parameters: `/v2/parties/participant-id` before `/v2/parties/{party}`. */
  literals: number;
}

/** Matches request paths to routes. Path parameters are percent-decoded. */
export class PathMatcher {
  private readonly compiled: Compiled[];
  /**
   * The routes without parameters by their whole path (with and without the trailing slash that
   * their patterns allow), in `compiled`'s order: most requests name one, found without testing
   * every route's pattern.
   */
  private readonly literal = new Map<string, Compiled[]>();

  /** `served`: whether a route is served now (default: every route, whatever its availability). */
  constructor(
    routes: readonly Route[],
    prefix: string,
    private readonly served: ServedNow = () => "yes",
  ) {
    this.compiled = routes.map((route) => compile(route, prefix)).sort((a, b) => b.literals - a.literals);
    for (const candidate of this.compiled) {
      if (candidate.names.length > 0) continue;
      const path = `${prefix}${candidate.route.path}`;
      for (const key of [path, `${path}/`]) {
        const same = this.literal.get(key);
        if (same === undefined) this.literal.set(key, [candidate]);
        else same.push(candidate);
      }
    }
  }

  /**
   * A route of the release served wins; then, for this method, one whose release is not known
   * yet, then one of another release (Canton answers any unmatched request, another method's
   * path included, as an unknown path); then another method's route at this path (405).
   */
  match(method: HttpMethod, urlPath: string): Match {
    // A route of this method, served, whose every segment is literal: no candidate before it in
    // `compiled` (as many literal segments or more, so this very path) would be chosen instead.
    for (const candidate of this.literal.get(urlPath) ?? NONE) {
      const { route } = candidate;
      if (route.method !== method) continue;
      if (route.availability !== undefined && this.served(route.availability) !== "yes") continue;
      return { kind: "found", route, path: {} };
    }
    const allowed: HttpMethod[] = [];
    let unknown: Route | undefined;
    let otherRelease: Route | undefined;
    for (const candidate of this.compiled) {
      const found = candidate.regex.exec(urlPath);
      if (!found) continue;
      const served =
        candidate.route.availability === undefined ? "yes" : this.served(candidate.route.availability);
      if (served !== "yes") {
        if (candidate.route.method !== method) continue;
        if (served === "unknown") unknown ??= candidate.route;
        else otherRelease ??= candidate.route;
        continue;
      }
      if (candidate.route.method !== method) {
        allowed.push(candidate.route.method);
        continue;
      }
      const path: Record<string, string> = {};
      candidate.names.forEach((name, i) => {
        path[name] = safeDecode(found[i + 1] as string);
      });
      return { kind: "found", route: candidate.route, path };
    }
    if (unknown !== undefined) return { kind: "release-unknown", route: unknown };
    if (otherRelease !== undefined) return { kind: "not-in-release", route: otherRelease };
    return allowed.length > 0 ? { kind: "method-not-allowed", allowed } : { kind: "not-found" };
  }
}

const NONE: readonly Compiled[] = [];

function compile(route: Route, prefix: string): Compiled {
  const names: string[] = [];
  let literals = 0;
  const pattern = `${prefix}${route.path}`
    .split("/")
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      if (param) {
        names.push(param[1] as string);
        return "([^/]+)";
      }
      literals++;
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { route, regex: new RegExp(`^${pattern}/?$`), names, literals };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
