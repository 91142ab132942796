import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "../../src/proto/project-root.js";

const ROOT = projectRoot();

/** A bench tool run as a user runs it, from its source. */
const tool = (name: string, ...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "bench", name), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });

describe("the bench tools' command lines", () => {
  it("print their usage for --help, with the defaults, and exit 0", () => {
    const local = tool("load.ts", "local", "--help");
    assert.equal(local.status, 0, local.stderr);
    assert.match(local.stdout, /^usage: ledger-json-gateway bench local .*\[--ticks 100000\]/);
    const unary = tool("micro/unary-cost.ts", "--help");
    assert.equal(unary.status, 0, unary.stderr);
    assert.match(unary.stdout, /^usage: node dist\/bench\/micro\/unary-cost\.js get\|submit\|list /);
  });

  it("every tool a user runs by hand answers --help and a stray flag with its usage line", () => {
    const tools = [
      "fanout-send",
      "sandbox-updates",
      "micro-transcoder",
      "value-codec",
      "slow-reader-closes",
      "storm-reference",
      "scrape-cost",
      "idle-upkeep",
    ];
    for (const name of tools) {
      const help = tool(`micro/${name}.ts`, "--help");
      assert.equal(help.status, 0, `${name} --help: ${help.stderr}`);
      assert.match(help.stdout, new RegExp(`^usage: node dist/bench/micro/${name}\\.js`));
      const stray = tool(`micro/${name}.ts`, "--bogus");
      assert.equal(stray.status, 2, `${name} --bogus`);
      assert.match(
        stray.stderr,
        new RegExp(`Unknown option '--bogus'\nusage: node dist/bench/micro/${name}\\.js`),
      );
    }
  });

  it("refuse an unknown flag, a missing value or an unknown scenario with a usage line and exit 2", () => {
    const unknown = tool("load.ts", "local", "--bogus", "1");
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--bogus'\nusage: ledger-json-gateway bench local /);
    assert.doesNotMatch(unknown.stderr, /\n\s+at /, "no stack trace");
    const missing = tool("micro/stream-cost.ts", "--ticks");
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /argument missing\nusage: node dist\/bench\/micro\/stream-cost\.js /);
    const scenario = tool("load.ts", "local", "--scenario", "nope");
    assert.equal(scenario.status, 2);
    assert.match(scenario.stderr, /unknown scenario nope; known: update-stream/);
    assert.match(scenario.stderr, /known: .*\bfairness\b/);
    const caps = tool("load.ts", "local", "--scenario", "fairness", "--fairness-caps", "maybe");
    assert.equal(caps.status, 2);
    assert.match(caps.stderr, /--fairness-caps takes on, off or both \(on,off\), not maybe/);
  });
});
