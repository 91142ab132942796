import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Route } from "../../src/endpoints/route.js";
import { PathMatcher } from "../../src/http/path-matcher.js";
import type { ApiVersion, Availability } from "../../src/proto/api-version.js";
import { ServedApiVersion } from "../../src/proto/served-api-version.js";

const route = (method: Route["method"], path: string, availability?: Availability): Route => ({
  method,
  path,
  operationId: `${method} ${path}`,
  summary: "",
  tag: "",
  response: { kind: "empty" },
  auth: "none",
  ...(availability ? { availability } : {}),
  handle: async () => ({ kind: "empty" }),
});

const ROUTES = [
  route("GET", "/v2/version"),
  route("POST", "/v2/updates/flats", { removedIn: "3.6.0" }),
  route("POST", "/v2/commands/command-completions", { since: "3.5.10" }),
  route("GET", "/v2/state/active-contracts-page", { deprecatedSince: "3.5.10" }),
  route("POST", "/v2/state/active-contracts-page", { since: "3.5.10" }),
  route("GET", "/v2/updates/transaction-tree-by-id/{update-id}", { removedIn: "3.6.0" }),
];

function matcherServing(version: ApiVersion | "auto"): PathMatcher {
  const served = new ServedApiVersion(version);
  return new PathMatcher(ROUTES, "", (availability) => served.serves(availability));
}

describe("PathMatcher with the release served", () => {
  it("finds the routes the release has, and says which of the others are another release's", () => {
    const in36 = matcherServing("3.6.0");
    assert.equal(in36.match("POST", "/v2/commands/command-completions").kind, "found");
    assert.equal(in36.match("POST", "/v2/updates/flats").kind, "not-in-release");
    assert.equal(in36.match("GET", "/v2/updates/transaction-tree-by-id/abc").kind, "not-in-release");
    assert.equal(in36.match("GET", "/v2/nothing").kind, "not-found");
    const in354 = matcherServing("3.5.4");
    assert.equal(in354.match("POST", "/v2/updates/flats").kind, "found");
    assert.equal(in354.match("POST", "/v2/commands/command-completions").kind, "not-in-release");
  });

  it("answers another release's method at a served path as that release does an unknown path, not 405", () => {
    // 3.5.4 has the GET of active-contracts-page only: its Canton answers a POST there 404.
    const match = matcherServing("3.5.4").match("POST", "/v2/state/active-contracts-page");
    assert.equal(match.kind, "not-in-release");
    // A method no release has at a served path is still the gateway's 405.
    const other = matcherServing("3.5.4").match("DELETE", "/v2/state/active-contracts-page");
    assert.deepEqual(other, { kind: "method-not-allowed", allowed: ["GET"] });
  });

  it("says the release is unknown for the marked routes only, before the participant answered", () => {
    const unknown = matcherServing("auto");
    assert.equal(unknown.match("GET", "/v2/version").kind, "found");
    assert.equal(unknown.match("POST", "/v2/updates/flats").kind, "release-unknown");
    assert.equal(unknown.match("POST", "/v2/state/active-contracts-page").kind, "release-unknown");
    // Deprecated in later releases, but in every one.
    assert.equal(unknown.match("GET", "/v2/state/active-contracts-page").kind, "found");
  });

  it("finds a literal path with or without its trailing slash, under the prefix, before a parameter's route", () => {
    const routes = [
      route("GET", "/v2/parties/{party}"),
      route("GET", "/v2/parties/participant-id"),
      route("POST", "/v2/parties/participant-id", { since: "3.5.10" }),
      route("POST", "/v2/parties/{party}"),
    ];
    const served = new ServedApiVersion("3.5.4");
    const matcher = new PathMatcher(routes, "/api", (availability) => served.serves(availability));
    for (const path of ["/api/v2/parties/participant-id", "/api/v2/parties/participant-id/"]) {
      const found = matcher.match("GET", path);
      assert.equal(found.kind === "found" && found.route, routes[1]);
      assert.deepEqual(found.kind === "found" && found.path, {});
    }
    // The literal POST is another release's: the parameter's route takes the path.
    const post = matcher.match("POST", "/api/v2/parties/participant-id");
    assert.equal(post.kind === "found" && post.route, routes[3]);
    assert.deepEqual(post.kind === "found" && post.path, { party: "participant-id" });
    assert.equal(matcher.match("GET", "/v2/parties/participant-id").kind, "not-found");
    assert.equal(matcher.match("DELETE", "/api/v2/parties/participant-id").kind, "method-not-allowed");
  });

  it("serves every route when told nothing of releases", () => {
    const all = new PathMatcher(ROUTES, "");
    for (const path of ["/v2/updates/flats", "/v2/commands/command-completions"])
      assert.equal(all.match("POST", path).kind, "found");
  });
});
