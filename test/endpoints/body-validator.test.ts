import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BodyValidator } from "../../src/endpoints/body-validator.js";
import { schemaComponents } from "../../src/endpoints/schema-components.js";
import { InvalidValueError } from "../../src/errors/index.js";
import type { ApiVersion } from "../../src/proto/api-version.js";

/** A grant of 3.6's new right, which 3.5's shapes do not know. */
const GRANT_ACT_AS_ANY_PARTY = {
  userId: "alice",
  rights: [{ kind: { CanActAsAnyParty: { value: {} } } }],
};

describe("BodyValidator, per Canton release", () => {
  it("validates against the shapes of the release served, asked at each request", () => {
    let served: ApiVersion = "3.5.10";
    const validator = new BodyValidator(() => served);
    validator.validate("GrantUserRightsRequest", {
      userId: "alice",
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    assert.throws(
      () => validator.validate("GrantUserRightsRequest", GRANT_ACT_AS_ANY_PARTY),
      (error) => error instanceof InvalidValueError,
    );
    served = "3.6.0";
    validator.validate("GrantUserRightsRequest", GRANT_ACT_AS_ANY_PARTY);
  });

  it("knows a shape of one release only, in that release", () => {
    const validator = new BodyValidator(() => "3.5.4");
    // 3.5.10 added GetCompletionsRequest, 3.6.0 GetUpdateByHashRequest: both compile up front.
    validator.prepare("GetCompletionsRequest");
    validator.prepare("GetUpdateByHashRequest");
    validator.validate("GetUpdateByHashRequest", { transactionHash: "aGFzaA==", updateFormat: {} }, "3.6.0");
    assert.throws(
      () => validator.prepare("NoSuchShape"),
      /no known Canton release has the schema NoSuchShape/,
    );
  });

  it("reads each release's shapes as the default's with that release's differences applied", () => {
    const base = schemaComponents("3.5.10").schemas;
    const older = schemaComponents("3.5.4").schemas;
    const newer = schemaComponents("3.6.0").schemas;
    assert.ok("GetCompletionsRequest" in base && !("GetCompletionsRequest" in older));
    assert.ok("GetTransactionByIdRequest" in base && !("GetTransactionByIdRequest" in newer));
    assert.ok("GetUpdateByHashRequest" in newer && !("GetUpdateByHashRequest" in base));
    assert.deepEqual(older.JsCommands, base.JsCommands);
    // The gateway's own shapes are in every release.
    for (const schemas of [base, older, newer]) assert.ok("StreamTicket" in schemas);
  });
});
