import assert from "node:assert/strict";
import { closeSync, openSync, readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { addProcessMetrics } from "../../src/metrics/gateway-metrics.js";
import { openFdCount } from "../../src/metrics/open-fds.js";

/** What prom-client's own gauge says: the listing, less the listing's own descriptor. */
const listed = () => readdirSync("/proc/self/fd").length - 1;

async function scraped(registry: Registry): Promise<number> {
  const text = await registry.metrics();
  const value = /^process_open_fds (\d+)$/m.exec(text)?.[1];
  assert.ok(value !== undefined, "process_open_fds in the scrape");
  return Number(value);
}

describe("process_open_fds (src/metrics/open-fds.ts)", () => {
  it("counts this process's descriptors as prom-client's did, and follows them as they open and close", async () => {
    const registry = new Registry();
    addProcessMetrics(registry);
    assert.equal(await scraped(registry), listed());
    const opened = Array.from({ length: 300 }, () => openSync("/dev/null", "r"));
    try {
      const during = await scraped(registry);
      assert.equal(during, listed());
      assert.ok(during >= 300, `${during} descriptors with 300 opened`);
    } finally {
      for (const fd of opened) closeSync(fd);
    }
    assert.equal(await scraped(registry), listed());
  });

  it("is one series, with prom-client's name and help", async () => {
    const registry = new Registry();
    addProcessMetrics(registry);
    const text = await registry.metrics();
    assert.equal(
      text.match(/^# HELP process_open_fds .*$/gm)?.join(),
      "# HELP process_open_fds Number of open file descriptors.",
    );
    assert.equal(text.match(/^process_open_fds /gm)?.length, 1);
  });

  it("lists the directory, off the event loop, where the kernel's stat does not count (before Linux 6.2)", async () => {
    assert.equal(await openFdCount(() => 0), listed());
  });
});
