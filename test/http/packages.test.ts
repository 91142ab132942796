import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import { t } from "../../src/lf/index.js";
import { SAMPLE_PACKAGE_ID } from "../../src/sandbox/sample-package/index.js";
import { buildDar, shapesDefinition } from "../sandbox/packages/test-packages.js";
import { jsonBody, type Stack, startStack } from "../support/stack.js";

interface JsCantonError {
  code: string;
  cause: string;
  errorCategory: number;
  grpcCodeValue: number;
}
interface PackageReference {
  packageId: string;
  packageName: string;
  packageVersion: string;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const octets = (bytes: Uint8Array): RequestInit => ({
  method: "POST",
  body: bytes,
  headers: { "Content-Type": "application/octet-stream" },
});

/** GET with a JSON body (fetch refuses to send one), as Canton's deprecated vetting list takes it. */
function getWithBody(stack: Stack, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const req = httpRequest(
      `${stack.url}${path}`,
      {
        method: "GET",
        headers: { authorization: `Bearer ${stack.token}`, "content-length": payload.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("package endpoints", () => {
  let stack: Stack;
  let alice: string;
  const other = buildDar(shapesDefinition("1.0.0", [], "http-shapes"));
  const upgrade = buildDar(
    shapesDefinition("1.1.0", [{ name: "note", type: t.optional(t.text) }], "http-shapes"),
  );

  before(async () => {
    stack = await startStack();
    const res = await stack.request("/v2/parties", jsonBody("POST", { partyIdHint: "alice" }));
    alice = ((await res.json()) as { partyDetails: { party: string } }).partyDetails.party;
  });
  after(() => stack.stop());

  it("lists the preloaded sample package", async () => {
    const res = await stack.request("/v2/packages");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { packageIds: [SAMPLE_PACKAGE_ID] });
  });

  it("validates a DAR with a 200 {} and stores nothing", async () => {
    const res = await stack.request("/v2/dars/validate", octets(other.dar));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {});
    const status = await stack.request(`/v2/packages/${other.packageId}/status`);
    assert.deepEqual(await status.json(), { packageStatus: "PACKAGE_STATUS_UNSPECIFIED" });
  });

  it("uploads a DAR (answering {}), lists it and reports it registered", async () => {
    const res = await stack.request("/v2/dars", octets(other.dar));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {});
    const list = (await (await stack.request("/v2/packages")).json()) as { packageIds: string[] };
    assert.ok(list.packageIds.includes(other.packageId));
    const status = await stack.request(`/v2/packages/${other.packageId}/status`);
    assert.deepEqual(await status.json(), { packageStatus: "PACKAGE_STATUS_REGISTERED" });
  });

  it("downloads a package chunked, with both hash headers equal to the sha-256 of the bytes and the id", async () => {
    const res = await stack.request(`/v2/packages/${other.packageId}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/octet-stream");
    assert.equal(res.headers.get("transfer-encoding"), "chunked");
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.equal(sha256(bytes), other.packageId);
    assert.equal(res.headers.get("ledger-package-hash"), other.packageId);
    assert.equal(res.headers.get("canton-package-hash"), other.packageId);
    // The bytes are the Archive payload inside the uploaded .dalf.
    assert.ok(Buffer.from(other.dalf).includes(Buffer.from(bytes)));
  });

  it("uploads a new version through the deprecated POST /v2/packages, and prefers it", async () => {
    const res = await stack.request("/v2/packages", octets(upgrade.dar));
    assert.equal(res.status, 200);
    const pref = await stack.request(
      "/v2/interactive-submission/preferred-packages",
      jsonBody("POST", { packageVettingRequirements: [{ parties: [alice], packageName: "http-shapes" }] }),
    );
    assert.equal(pref.status, 200);
    const body = (await pref.json()) as { packageReferences: PackageReference[]; synchronizerId: string };
    assert.deepEqual(body.packageReferences, [
      { packageId: upgrade.packageId, packageName: "http-shapes", packageVersion: "1.1.0" },
    ]);
    assert.notEqual(body.synchronizerId, "");
  });

  it("answers the deprecated preferred-package-version from query parameters", async () => {
    const res = await stack.request(
      `/v2/interactive-submission/preferred-package-version?parties=${encodeURIComponent(alice)}&package-name=http-shapes`,
    );
    assert.equal(res.status, 200);
    const body = (await res.json()) as { packagePreference: { packageReference: PackageReference } };
    assert.equal(body.packagePreference.packageReference.packageId, upgrade.packageId);
  });

  it("answers 400 FAILED_PRECONDITION when no vetted package satisfies the requirement", async () => {
    const res = await stack.request(
      "/v2/interactive-submission/preferred-packages",
      jsonBody("POST", {
        packageVettingRequirements: [{ parties: [alice], packageName: "no-such-package" }],
      }),
    );
    assert.equal(res.status, 400);
    const error = (await res.json()) as JsCantonError;
    assert.equal(error.code, "NO_PREFERRED_PACKAGES_FOUND");
    assert.equal(error.grpcCodeValue, 9);
  });

  it("unvets with /v2/package-vetting/update and lists with /list and the deprecated GET", async () => {
    const update = await stack.request(
      "/v2/package-vetting/update",
      jsonBody("POST", {
        changes: [{ operation: { Unvet: { value: { packages: [{ packageId: upgrade.packageId }] } } } }],
      }),
    );
    assert.equal(update.status, 200);
    const updated = (await update.json()) as {
      pastVettedPackages: { packages: PackageReference[]; topologySerial: number };
      newVettedPackages: { packages: PackageReference[]; topologySerial: number };
    };
    assert.ok(updated.pastVettedPackages.packages.some((p) => p.packageId === upgrade.packageId));
    assert.ok(!updated.newVettedPackages.packages.some((p) => p.packageId === upgrade.packageId));
    assert.equal(updated.newVettedPackages.topologySerial, updated.pastVettedPackages.topologySerial + 1);

    const filter = { packageMetadataFilter: { packageNamePrefixes: ["http-"] } };
    const list = await stack.request("/v2/package-vetting/list", jsonBody("POST", filter));
    assert.equal(list.status, 200);
    const listed = (await list.json()) as { vettedPackages: { packages: PackageReference[] }[] };
    assert.deepEqual(
      listed.vettedPackages.flatMap((v) => v.packages.map((p) => p.packageId)),
      [other.packageId],
    );
    const old = await getWithBody(stack, "/v2/package-vetting", filter);
    assert.equal(old.status, 200);
    assert.deepEqual(old.json, listed);
  });

  it("vets again with the deprecated POST /v2/package-vetting", async () => {
    const res = await stack.request(
      "/v2/package-vetting",
      jsonBody("POST", {
        changes: [
          {
            operation: {
              Vet: { value: { packages: [{ packageName: "http-shapes", packageVersion: "1.1.0" }] } },
            },
          },
        ],
      }),
    );
    assert.equal(res.status, 200);
    const body = (await res.json()) as { newVettedPackages: { packages: PackageReference[] } };
    assert.ok(body.newVettedPackages.packages.some((p) => p.packageId === upgrade.packageId));
  });

  it("rejects a same-name-same-version package with different content: 400 KNOWN_PACKAGE_VERSION", async () => {
    const clash = buildDar(
      shapesDefinition("1.0.0", [{ name: "x", type: t.optional(t.int64) }], "http-shapes"),
    );
    const res = await stack.request("/v2/dars", octets(clash.dar));
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as JsCantonError).code, "KNOWN_PACKAGE_VERSION");
  });

  it("answers a malformed DAR and a broken archive with clear 400s", async () => {
    const notZip = await stack.request("/v2/dars", octets(new TextEncoder().encode("definitely not a zip")));
    assert.equal(notZip.status, 400);
    const error = (await notZip.json()) as JsCantonError;
    assert.equal(error.code, "INVALID_DAR");
    assert.equal(error.errorCategory, 8);

    const { writeDar } = await import("../../src/lf/index.js");
    const garbage = writeDar({
      name: "junk",
      version: "1.0.0",
      packageId: "0".repeat(64),
      dalf: new Uint8Array([1, 2, 3]),
    });
    const parse = await stack.request("/v2/dars/validate", octets(garbage));
    assert.equal(parse.status, 400);
    assert.equal(((await parse.json()) as JsCantonError).code, "DAR_PARSE_ERROR");

    const empty = await stack.request("/v2/dars", octets(new Uint8Array()));
    assert.equal(empty.status, 400);
  });

  it("answers an unknown package with 404 PACKAGE_NOT_FOUND", async () => {
    const res = await stack.request(`/v2/packages/${"a".repeat(64)}`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as JsCantonError).code, "PACKAGE_NOT_FOUND");
  });

  it("requires a token: 401 without one", async () => {
    for (const path of ["/v2/packages", `/v2/packages/${SAMPLE_PACKAGE_ID}`]) {
      const res = await stack.request(path, { token: null });
      assert.equal(res.status, 401, path);
    }
    const upload = await stack.request("/v2/dars", { ...octets(other.dar), token: null });
    assert.equal(upload.status, 401);
  });
});
