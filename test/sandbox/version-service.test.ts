import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { SERVICES, serviceClient } from "./sandbox-client.js";

describe("sandbox VersionService", () => {
  let sandbox: RunningSandbox;
  let version: ReturnType<typeof serviceClient>;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    version = serviceClient(sandbox.port, SERVICES.version);
  });
  after(async () => {
    version.close();
    await sandbox.stop();
  });

  it("reports the release it speaks (3.5.10 by default) with Canton's default feature limits", async () => {
    const response = await version.GetLedgerApiVersion!({});
    strictEqual(response.version, "3.5.10");
    deepStrictEqual(response.features, {
      experimental: { staticTime: { supported: false }, commandInspectionService: { supported: false } },
      userManagement: { supported: true, maxRightsPerUser: 1000, maxUsersPageSize: 1000 },
      partyManagement: { maxPartiesPageSize: 10000 },
      offsetCheckpoint: { maxOffsetCheckpointEmissionDelay: { seconds: "75", nanos: 0 } },
      packageFeature: { maxVettedPackagesPageSize: 100 },
    });
  });
});
