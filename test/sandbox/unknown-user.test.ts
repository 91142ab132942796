import { strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, rejection, serviceClient, token } from "./sandbox-client.js";

const PACKAGES = "com.daml.ledger.api.v2.PackageService";
const SUBMISSION = "com.daml.ledger.api.v2.CommandSubmissionService";

/**
 * Canton resolves a user token's user before any service sees the call: a user that does not
 * exist is refused (PERMISSION_DENIED, redacted) by public services too, and before the method
 * looks at its request.
 */
describe("sandbox: a token of an unknown user is refused by every service", () => {
  let sandbox: RunningSandbox;
  let packages: ReturnType<typeof serviceClient>;
  let submission: ReturnType<typeof serviceClient>;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    packages = serviceClient(sandbox.port, PACKAGES);
    submission = serviceClient(sandbox.port, SUBMISSION);
  });
  after(async () => {
    packages.close();
    submission.close();
    await sandbox.stop();
  });

  it("refuses ListPackages and GetPackage (public services) for an unknown user, serves a known one", async () => {
    const stranger = bearer(token("nobody-at-all"));
    strictEqual((await rejection(packages.ListPackages!({}, stranger))).code, grpc.status.PERMISSION_DENIED);
    strictEqual(
      (await rejection(packages.GetPackage!({ packageId: "abc" }, stranger))).code,
      grpc.status.PERMISSION_DENIED,
    );
    const listed = await packages.ListPackages!<{ packageIds: string[] }>({});
    strictEqual(listed.packageIds.length > 0, true);
  });

  it("refuses an unknown user before the method judges its request", async () => {
    const stranger = bearer(token("nobody-at-all"));
    strictEqual(
      (await rejection(submission.SubmitReassignment!({}, stranger))).code,
      grpc.status.PERMISSION_DENIED,
    );
    // A known user gets as far as the request: it lacks its reassignment commands.
    strictEqual((await rejection(submission.SubmitReassignment!({}))).code, grpc.status.INVALID_ARGUMENT);
  });
});
