import type { HttpMethod, Route } from "../endpoints/route.js";

export type Match =
  | { kind: "found"; route: Route; path: Record<string, string> }
  | { kind: "method-not-allowed"; allowed: HttpMethod[] }
  | { kind: "not-found" };

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

  constructor(routes: readonly Route[], prefix: string) {
    this.compiled = routes.map((route) => compile(route, prefix)).sort((a, b) => b.literals - a.literals);
  }

  match(method: HttpMethod, urlPath: string): Match {
    const allowed: HttpMethod[] = [];
    for (const candidate of this.compiled) {
      const found = candidate.regex.exec(urlPath);
      if (!found) continue;
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
    return allowed.length > 0 ? { kind: "method-not-allowed", allowed } : { kind: "not-found" };
  }
}

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
