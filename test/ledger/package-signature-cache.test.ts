import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { pino } from "pino";
import { LedgerClient } from "../../src/ledger/ledger-client.js";
import { PackageSignatureCache } from "../../src/ledger/package-signature-cache.js";
import { t } from "../../src/lf/index.js";
import { archivedPackage } from "../../src/sandbox/packages/dar-reader.js";
import { SAMPLE_PACKAGE_ID, sampleIds } from "../../src/sandbox/sample-package/index.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { buildDar, shapesDefinition } from "../sandbox/packages/test-packages.js";
import { token } from "../sandbox/sandbox-client.js";

/** Counts the calls the sandbox served, by method name, from its debug log. */
function callCounter() {
  const counts = new Map<string, number>();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line === "") continue;
        const record = JSON.parse(line) as { msg?: string; method?: string };
        if (record.msg === "ledger api call" && record.method !== undefined) {
          const name = record.method.split("/")[1]!;
          counts.set(name, (counts.get(name) ?? 0) + 1);
        }
      }
      done();
    },
  });
  return { log: pino({ level: "debug" }, stream), count: (method: string) => counts.get(method) ?? 0 };
}

describe("PackageSignatureCache against the sandbox", () => {
  let sandbox: RunningSandbox;
  let ledger: LedgerClient;
  let alice: string;
  const calls = callCounter();
  const jwt = token();
  const extra = ["1.0.0", "2.0.0", "3.0.0"].map((v) =>
    buildDar(shapesDefinition(v, [], `cache-test-${v[0]}`)),
  );

  before(async () => {
    sandbox = await startSandbox({ port: 0, log: calls.log });
    ledger = new LedgerClient({ target: `127.0.0.1:${sandbox.port}`, deadlineMs: 5_000 });
    for (const p of extra) sandbox.packages.add([archivedPackage("test.dalf", p.dalf)]);
    const allocated = await ledger.unary<{ partyDetails: { party: string } }>(
      "admin.PartyManagementService",
      "AllocateParty",
      { partyIdHint: "alice" },
      jwt,
    );
    alice = allocated.partyDetails.party;
  });
  after(async () => {
    ledger.close();
    await sandbox.stop();
  });

  it("fetches and decodes a package on first need, then translates its values", async () => {
    const cache = new PackageSignatureCache({ ledger });
    strictEqual(cache.resolveTemplate(sampleIds.tick), undefined);
    await cache.ensure([SAMPLE_PACKAGE_ID], jwt);
    ok(cache.has(SAMPLE_PACKAGE_ID));
    strictEqual(cache.resolveTemplate(sampleIds.tick)?.name, "Tick");
    const codec = cache.codec.templatePayload(sampleIds.tick);
    const json = { owner: alice, seq: "7", payload: "x" };
    deepStrictEqual(codec.toJson(codec.toValue(json)), json);
  });

  it("coalesces concurrent misses of one package into one GetPackage call", async () => {
    const cache = new PackageSignatureCache({ ledger });
    const before = calls.count("GetPackage");
    await Promise.all(Array.from({ length: 8 }, () => cache.ensure([SAMPLE_PACKAGE_ID], jwt)));
    strictEqual(calls.count("GetPackage") - before, 1);
    ok(cache.has(SAMPLE_PACKAGE_ID));
  });

  it("evicts the least recently used package past its count limit, and fetches it again on need", async () => {
    const cache = new PackageSignatureCache({ ledger, maxPackages: 2 });
    const [a, b, c] = extra.map((p) => p.packageId) as [string, string, string];
    await cache.ensure([a], jwt);
    await cache.ensure([b], jwt);
    // A lookup makes `a` recent, so `b` is the one to go when `c` arrives.
    ok(cache.resolveTemplate({ packageId: a, moduleName: "Shapes", entityName: "Box" }));
    await cache.ensure([c], jwt);
    strictEqual(cache.size, 2);
    ok(cache.has(a) && cache.has(c) && !cache.has(b));
    const before = calls.count("GetPackage");
    await cache.ensure([b], jwt);
    strictEqual(calls.count("GetPackage") - before, 1);
    ok(!cache.has(a), "a is now the least recently used");
  });

  it("keeps the byte budget, holding at least the newest package", async () => {
    const cache = new PackageSignatureCache({ ledger, maxBytes: 1 });
    await cache.ensure([extra[0]!.packageId, extra[1]!.packageId], jwt);
    strictEqual(cache.size, 1);
  });

  it("reports an unknown package as the ledger's NOT_FOUND and does not remember the failure", async () => {
    const cache = new PackageSignatureCache({ ledger });
    const unknown = "ef".repeat(32);
    await rejects(
      cache.ensure([unknown], jwt),
      (error: grpc.ServiceError) => error.code === grpc.status.NOT_FOUND,
    );
    ok(!cache.has(unknown));
    // Uploaded later, the same id loads: a miss is never cached.
    const late = buildDar(shapesDefinition("9.0.0", [{ name: "n", type: t.optional(t.int64) }], "late"));
    sandbox.packages.add([archivedPackage("late.dalf", late.dalf)]);
    await cache.ensure([late.packageId], jwt);
    ok(cache.has(late.packageId));
  });

  it("retries a shared fetch with its own token when the first requester's token fails", async () => {
    const cache = new PackageSignatureCache({ ledger });
    const [bad, good] = await Promise.allSettled([
      cache.ensure([SAMPLE_PACKAGE_ID], undefined),
      cache.ensure([SAMPLE_PACKAGE_ID], jwt),
    ]);
    strictEqual(bad.status, "rejected");
    strictEqual(good.status, "fulfilled");
    ok(cache.has(SAMPLE_PACKAGE_ID));
  });

  it("resolves a package name through GetPreferredPackages and reuses the answer briefly", async () => {
    let now = 0;
    const cache = new PackageSignatureCache({ ledger, preferenceTtlMs: 1_000, now: () => now });
    const before = calls.count("GetPreferredPackages");
    strictEqual(await cache.resolvePackageName("gateway-samples", alice, jwt), SAMPLE_PACKAGE_ID);
    strictEqual(await cache.resolvePackageName("gateway-samples", alice, jwt), SAMPLE_PACKAGE_ID);
    strictEqual(calls.count("GetPreferredPackages") - before, 1);
    now = 2_000;
    await cache.resolvePackageName("gateway-samples", alice, jwt);
    strictEqual(calls.count("GetPreferredPackages") - before, 2);
  });

  it("passes the ledger's FAILED_PRECONDITION on when no package of the name is vetted", async () => {
    const cache = new PackageSignatureCache({ ledger });
    await rejects(
      cache.resolvePackageName("cache-test-1", alice, jwt),
      (error: grpc.ServiceError) => error.code === grpc.status.FAILED_PRECONDITION,
    );
  });
});
