import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

type Json = Record<string, unknown>;

const config = (id: string, issuer = `iss-${id}`) => ({
  identityProviderId: id,
  isDeactivated: false,
  jwksUrl: `https://${id}.example/jwks`,
  issuer,
  audience: "",
});

describe("identity provider configurations over HTTP", () => {
  let stack: Stack;
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await stack.request(path, init);
    return { status: response.status, body: (await response.json()) as Json };
  };
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it("creates, gets and lists configurations", async () => {
    const created = await call("/v2/idps", jsonBody("POST", { identityProviderConfig: config("one") }));
    deepStrictEqual(created, { status: 200, body: { identityProviderConfig: config("one") } });
    deepStrictEqual((await call("/v2/idps/one")).body, { identityProviderConfig: config("one") });
    deepStrictEqual((await call("/v2/idps")).body, { identityProviderConfigs: [config("one")] });
  });

  it("refuses duplicate ids and issuers, unknown ids and bad URLs as Canton does", async () => {
    const sameId = await call(
      "/v2/idps",
      jsonBody("POST", { identityProviderConfig: config("one", "other") }),
    );
    strictEqual(sameId.status, 409);
    strictEqual(sameId.body.code, "IDP_CONFIG_ALREADY_EXISTS");
    const sameIssuer = await call(
      "/v2/idps",
      jsonBody("POST", { identityProviderConfig: config("two", "iss-one") }),
    );
    strictEqual(sameIssuer.body.code, "IDP_CONFIG_ISSUER_ALREADY_EXISTS");
    const unknown = await call("/v2/idps/nope");
    strictEqual(unknown.status, 404);
    strictEqual(
      unknown.body.cause,
      'getting identity provider config failed for unknown identity provider id="nope"',
    );
    const badUrl = await call(
      "/v2/idps",
      jsonBody("POST", { identityProviderConfig: { ...config("three"), jwksUrl: "nope" } }),
    );
    strictEqual(badUrl.status, 400);
    strictEqual(badUrl.body.code, "INVALID_FIELD");
  });

  it("updates through a field mask", async () => {
    const updated = await call(
      "/v2/idps/one",
      jsonBody("PATCH", {
        identityProviderConfig: {
          ...config("one"),
          isDeactivated: true,
          audience: "aud-x",
          issuer: "ignored",
        },
        updateMask: { paths: ["is_deactivated", "audience"] },
      }),
    );
    deepStrictEqual(updated.body, {
      identityProviderConfig: { ...config("one"), isDeactivated: true, audience: "aud-x" },
    });
    const mismatch = await call(
      "/v2/idps/one",
      jsonBody("PATCH", { identityProviderConfig: config("two"), updateMask: { paths: ["audience"] } }),
    );
    strictEqual(mismatch.status, 400);
  });

  it("deletes, and fails at the maximum of 16 configurations", async () => {
    deepStrictEqual(await call("/v2/idps/one", { method: "DELETE" }), { status: 200, body: {} });
    strictEqual((await call("/v2/idps/one", { method: "DELETE" })).status, 404);
    for (let i = 0; i < 16; i++) {
      strictEqual(
        (await call("/v2/idps", jsonBody("POST", { identityProviderConfig: config(`idp-${i}`) }))).status,
        200,
      );
    }
    const tooMany = await call("/v2/idps", jsonBody("POST", { identityProviderConfig: config("idp-16") }));
    strictEqual(tooMany.status, 400);
    strictEqual(tooMany.body.code, "TOO_MANY_IDENTITY_PROVIDER_CONFIGS");
    strictEqual(tooMany.body.cause, "creating identity provider config failed.");
  });
});
