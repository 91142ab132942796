import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SAMPLE_PACKAGE_ID } from "../../../src/sandbox/sample-package/index.js";
import { type Stack, startStack } from "../../support/stack.js";
import { darWithSdkLibraries, shapesDefinition } from "./test-packages.js";

type Json = Record<string, unknown>;

/**
 * Issue 15, item 2, as a client uploads DARs through the gateway: DARs built with different SDK
 * releases each bring their own `daml-prim` and `daml-stdlib` (same names and versions, other
 * ids). Canton exempts those, and every utility package, from the upgrade checks.
 */
describe("uploading DARs of different SDK releases", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  const upload = async (dar: Uint8Array) => {
    const response = await stack.request("/v2/dars", {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: dar,
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it("accepts a second DAR whose daml-prim and daml-stdlib differ from the first one's", async () => {
    const first = darWithSdkLibraries(shapesDefinition("1.0.0", [], "app-one"), "SdkA");
    const second = darWithSdkLibraries(shapesDefinition("1.0.0", [], "app-two"), "SdkB");
    ok(first.primId !== second.primId && first.stdlibId !== second.stdlibId);
    deepStrictEqual(await upload(first.dar), { status: 200, body: {} });
    deepStrictEqual(await upload(second.dar), { status: 200, body: {} });

    const listed = (await (await stack.request("/v2/packages")).json()) as { packageIds: string[] };
    for (const id of [
      first.mainId,
      first.primId,
      first.stdlibId,
      second.mainId,
      second.primId,
      second.stdlibId,
    ])
      ok(listed.packageIds.includes(id), `${id} is stored`);
    const vetted = await stack.request("/v2/package-vetting/list", {
      method: "POST",
      body: JSON.stringify({ packageMetadataFilter: { packageNamePrefixes: ["daml-"] } }),
    });
    const vettedIds = JSON.stringify(await vetted.json());
    for (const id of [first.primId, second.primId, first.stdlibId, second.stdlibId])
      ok(vettedIds.includes(id), `${id} is vetted`);
  });

  it("refuses a daml-prim that is not a utility package (DAML_PRIM_NOT_UTILITY_PACKAGE)", async () => {
    const prim = { ...shapesDefinition("0.0.0", [], "daml-prim") };
    const { dar, primId } = darWithSdkLibraries(shapesDefinition("1.0.0", [], "app-three"), "SdkC", prim);
    const { status, body } = await upload(dar);
    strictEqual(status, 400);
    strictEqual(body.code, "DAML_PRIM_NOT_UTILITY_PACKAGE");
    strictEqual(
      body.cause,
      `Tried to vet a package ${primId} (daml-prim v0.0.0), but this package is not a utility package. All packages named \`daml-prim\` or \`daml-std-lib\` must be a utility package.`,
    );
  });

  it("still refuses two vetted packages with templates under one name and version (KNOWN_PACKAGE_VERSION)", async () => {
    const clash = darWithSdkLibraries(shapesDefinition("1.0.0", [], "gateway-samples"), "SdkA");
    const { status, body } = await upload(clash.dar);
    strictEqual(status, 400);
    strictEqual(body.code, "KNOWN_PACKAGE_VERSION");
    ok(String(body.cause).includes(SAMPLE_PACKAGE_ID));
  });
});
