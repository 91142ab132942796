import { doesNotThrow, strictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import type { ResolvedClaims } from "../../../src/sandbox/auth/resolved-claims.js";
import { checkRequirement, impliedIdentityProviderId } from "../../../src/sandbox/auth/rights-authorizer.js";
import { SandboxError } from "../../../src/sandbox/sandbox-error.js";

const base: ResolvedClaims = {
  userId: "u",
  resolvedFromUser: true,
  admin: false,
  idpAdmin: false,
  readAsAnyParty: false,
  executeAsAnyParty: false,
  actAsAnyParty: false,
  actAs: new Set(),
  readAs: new Set(),
  executeAs: new Set(),
};
const denied = (claims: ResolvedClaims, requirement: Parameters<typeof checkRequirement>[1]) =>
  throws(
    () => checkRequirement(claims, requirement),
    (e: unknown) => e instanceof SandboxError && e.code.id === "PERMISSION_DENIED",
  );

describe("rights authorizer (Canton's required claims)", () => {
  it("submissions need CanActAs for actAs and a read right for readAs", () => {
    const claims = { ...base, actAs: new Set(["a"]), readAs: new Set(["r"]) };
    doesNotThrow(() => checkRequirement(claims, { kind: "act-as", actAs: ["a"], readAs: ["r", "a"] }));
    denied(claims, { kind: "act-as", actAs: ["r"], readAs: [] });
    denied({ ...base, admin: true }, { kind: "act-as", actAs: ["a"], readAs: [] });
  });

  it("CanActAsAnyParty (3.6) acts, reads and executes as every party, and administers nothing", () => {
    const claims = { ...base, actAsAnyParty: true };
    doesNotThrow(() => checkRequirement(claims, { kind: "act-as", actAs: ["x", "y"], readAs: ["z"] }));
    doesNotThrow(() => checkRequirement(claims, { kind: "read-as", parties: ["any"] }));
    doesNotThrow(() => checkRequirement(claims, { kind: "read-as-any-party" }));
    doesNotThrow(() => checkRequirement(claims, { kind: "execute-as", parties: ["x"] }));
    doesNotThrow(() =>
      checkRequirement(claims, { kind: "own-user-id", userId: "other", unlessReadsAsAnyParty: true }),
    );
    denied(claims, { kind: "admin" });
    denied(claims, { kind: "idp-admin", identityProviderId: "" });
    denied(claims, { kind: "own-user-id", userId: "other" });
  });

  it("some-readable-party (MatchReadAsParties) needs a read or act right on some party, or any party", () => {
    doesNotThrow(() =>
      checkRequirement({ ...base, readAs: new Set(["r"]) }, { kind: "some-readable-party" }),
    );
    doesNotThrow(() => checkRequirement({ ...base, actAs: new Set(["a"]) }, { kind: "some-readable-party" }));
    doesNotThrow(() => checkRequirement({ ...base, readAsAnyParty: true }, { kind: "some-readable-party" }));
    doesNotThrow(() => checkRequirement({ ...base, actAsAnyParty: true }, { kind: "some-readable-party" }));
    denied({ ...base, admin: true, executeAs: new Set(["e"]) }, { kind: "some-readable-party" });
  });

  it("takes a request's user id only when it is the token's own, admins' included (MatchUserId)", () => {
    const admin = { ...base, admin: true, actAs: new Set(["a"]) };
    doesNotThrow(() => checkRequirement(admin, { kind: "own-user-id", userId: "u" }));
    doesNotThrow(() => checkRequirement(admin, { kind: "own-user-id", userId: "" }));
    throws(
      () => checkRequirement(admin, { kind: "own-user-id", userId: "other" }),
      (e: unknown) =>
        e instanceof SandboxError &&
        e.code.id === "PERMISSION_DENIED" &&
        e.message.includes("Claims are only valid for userId 'u', actual userId is 'other'"),
    );
    // A party reader stays bound to its user; only a reader of any party may name another, and
    // only where the requirement allows it (the completion stream, not a submission).
    denied(
      { ...base, readAs: new Set(["p"]) },
      { kind: "own-user-id", userId: "other", unlessReadsAsAnyParty: true },
    );
    doesNotThrow(() =>
      checkRequirement(
        { ...base, readAsAnyParty: true },
        { kind: "own-user-id", userId: "other", unlessReadsAsAnyParty: true },
      ),
    );
    denied({ ...base, readAsAnyParty: true }, { kind: "own-user-id", userId: "other" });
  });

  it("cannot default an empty user id without the token's user (INVALID_TOKEN)", () => {
    const { userId: _, ...anonymous } = base;
    throws(
      () => checkRequirement(anonymous, { kind: "own-user-id", userId: "" }),
      (e: unknown) =>
        e instanceof SandboxError &&
        e.code.id === "INVALID_TOKEN" &&
        e.message.includes("Cannot default user_id field because claims do not specify an user-id"),
    );
  });

  it("reads need CanReadAs, CanActAs or CanReadAsAnyParty", () => {
    doesNotThrow(() =>
      checkRequirement({ ...base, readAsAnyParty: true }, { kind: "read-as", parties: ["x"] }),
    );
    doesNotThrow(() =>
      checkRequirement({ ...base, actAs: new Set(["x"]) }, { kind: "read-as", parties: ["x"] }),
    );
    denied({ ...base, executeAs: new Set(["x"]) }, { kind: "read-as", parties: ["x"] });
    denied(base, { kind: "read-as-any-party" });
  });

  it("interactive execution accepts CanExecuteAs, CanActAs or CanExecuteAsAnyParty", () => {
    doesNotThrow(() =>
      checkRequirement({ ...base, executeAs: new Set(["x"]) }, { kind: "execute-as", parties: ["x"] }),
    );
    doesNotThrow(() =>
      checkRequirement({ ...base, executeAsAnyParty: true }, { kind: "execute-as", parties: ["y"] }),
    );
    denied({ ...base, readAs: new Set(["x"]) }, { kind: "execute-as", parties: ["x"] });
  });

  it("scopes identity provider admins to their provider", () => {
    const idpAdmin = { ...base, idpAdmin: true, identityProviderId: "idp1" };
    doesNotThrow(() => checkRequirement(idpAdmin, { kind: "idp-admin", identityProviderId: "idp1" }));
    doesNotThrow(() => checkRequirement(idpAdmin, { kind: "idp-admin", identityProviderId: "" }));
    strictEqual(impliedIdentityProviderId(idpAdmin, ""), "idp1");
    denied(idpAdmin, { kind: "idp-admin", identityProviderId: "idp2" });
    denied(idpAdmin, { kind: "admin" });
  });

  it("lets users read themselves and allocate parties for themselves only", () => {
    doesNotThrow(() => checkRequirement(base, { kind: "user-reader", userId: "", identityProviderId: "" }));
    doesNotThrow(() => checkRequirement(base, { kind: "user-reader", userId: "u", identityProviderId: "" }));
    denied(base, { kind: "user-reader", userId: "other", identityProviderId: "" });
    doesNotThrow(() =>
      checkRequirement(base, { kind: "self-or-idp-admin", userId: "u", identityProviderId: "" }),
    );
    denied(base, { kind: "self-or-idp-admin", userId: "", identityProviderId: "" });
  });
});
