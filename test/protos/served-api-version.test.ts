import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  availableIn,
  DEFAULT_API_VERSION,
  deprecatedIn,
  KNOWN_API_VERSIONS,
} from "../../src/proto/api-version.js";
import {
  nearestKnownApiVersion,
  ServedApiVersion,
  servedApiVersionBuffer,
} from "../../src/proto/served-api-version.js";

describe("nearestKnownApiVersion", () => {
  it("serves a known release as itself, a pre-release of one (main's 3.6.0-SNAPSHOT) too", () => {
    for (const version of KNOWN_API_VERSIONS)
      assert.deepEqual(nearestKnownApiVersion(version), { version, exact: true });
    assert.deepEqual(nearestKnownApiVersion("3.6.0-SNAPSHOT"), { version: "3.6.0", exact: true });
    assert.deepEqual(nearestKnownApiVersion("3.5.10+build.7"), { version: "3.5.10", exact: true });
  });

  it("serves an unknown release as the newest known one older than it, never a newer one", () => {
    assert.deepEqual(nearestKnownApiVersion("3.5.7"), { version: "3.5.4", exact: false });
    assert.deepEqual(nearestKnownApiVersion("3.5.11"), { version: "3.5.10", exact: false });
    assert.deepEqual(nearestKnownApiVersion("3.7.2"), { version: "3.6.0", exact: false });
    assert.deepEqual(nearestKnownApiVersion("4.0.0"), { version: "3.6.0", exact: false });
  });

  it("serves a release older than every known one, or no release at all, as the oldest known", () => {
    assert.deepEqual(nearestKnownApiVersion("3.4.9"), { version: "3.5.4", exact: false });
    assert.deepEqual(nearestKnownApiVersion(""), { version: "3.5.4", exact: false });
    assert.deepEqual(nearestKnownApiVersion("latest"), { version: "3.5.4", exact: false });
  });
});

describe("ServedApiVersion", () => {
  it("knows nothing in auto mode before the participant answered: marked operations are unknown", () => {
    const served = new ServedApiVersion("auto");
    assert.equal(served.current(), undefined);
    assert.equal(served.reported(), undefined);
    assert.equal(served.serves(undefined), "yes");
    assert.equal(served.serves({ since: "3.5.10" }), "unknown");
    assert.equal(served.serves({ deprecatedSince: "3.5.10" }), "yes");
  });

  it("serves the participant's release in auto mode, and says whether it changed", () => {
    const served = new ServedApiVersion("auto");
    assert.deepEqual(served.record("3.5.10"), { served: "3.5.10", known: true, changed: true });
    assert.equal(served.serves({ since: "3.5.10" }), "yes");
    assert.equal(served.serves({ removedIn: "3.6.0" }), "yes");
    assert.deepEqual(served.record("3.5.10"), { served: "3.5.10", known: true, changed: false });
    assert.deepEqual(served.record("3.7.2"), { served: "3.6.0", known: false, changed: true });
    assert.equal(served.reported(), "3.7.2");
    assert.equal(served.serves({ removedIn: "3.6.0" }), "no");
  });

  it("keeps a pinned release whatever the participant reports", () => {
    const served = new ServedApiVersion("3.5.4");
    assert.equal(served.current(), "3.5.4");
    assert.deepEqual(served.record("3.6.0"), { served: "3.5.4", known: false, changed: false });
    assert.deepEqual(served.record("3.5.4"), { served: "3.5.4", known: true, changed: false });
    assert.equal(served.serves({ since: "3.5.10" }), "no");
  });

  it("assumes a release only while none is known", () => {
    const served = new ServedApiVersion("auto");
    assert.equal(served.assume(DEFAULT_API_VERSION), DEFAULT_API_VERSION);
    served.record("3.6.0");
    assert.equal(served.assume(DEFAULT_API_VERSION), "3.6.0");
  });

  it("is one release for every holder of its buffer (the worker threads)", () => {
    const buffer = servedApiVersionBuffer();
    const one = new ServedApiVersion("auto", buffer);
    const other = new ServedApiVersion("auto", buffer);
    one.record("3.6.0-SNAPSHOT");
    assert.equal(other.current(), "3.6.0");
    assert.equal(other.reported(), "3.6.0-SNAPSHOT");
    other.record("3.5.10");
    assert.equal(one.current(), "3.5.10");
  });

  it("keeps a label's worth of a long reported text", () => {
    const served = new ServedApiVersion("auto");
    served.record(`3.6.0-${"x".repeat(200)}`);
    assert.equal(served.reported()?.length, 64);
  });
});

describe("availability", () => {
  it("marks the releases that have an operation, and those that deprecate it", () => {
    assert.deepEqual(
      KNOWN_API_VERSIONS.map((v) => availableIn({ since: "3.5.10", removedIn: "3.6.0" }, v)),
      [false, true, false],
    );
    assert.deepEqual(
      KNOWN_API_VERSIONS.map((v) => deprecatedIn(undefined, { deprecatedSince: "3.5.10" }, v)),
      [false, true, true],
    );
    assert.equal(deprecatedIn(true, undefined, "3.5.4"), true);
  });
});
