import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { loadOptions, type RawOptions } from "../../bench/load/load-options.js";
import { parseMix, weightedCycle } from "../../bench/load/mix.js";
import { UsageError } from "../../bench/load/usage-error.js";
import { compileTemplate, type Fill } from "../../bench/load/workflows/placeholders.js";
import { readScenarioFile } from "../../bench/load/workflows/scenario-file.js";
import { readPointer } from "../../bench/load/workflows/workflow.js";

const raw = (over: Partial<RawOptions> = {}): RawOptions => ({
  url: "http://127.0.0.1:7575",
  "token-file": "t",
  subscribers: "10",
  duration: "60s",
  "warm-up": "5s",
  interval: "5s",
  out: "out",
  connections: "64",
  "acs-contracts": "100",
  "reassignment-contracts": "64",
  ...over,
});

const fill = (saved: Record<string, unknown> = {}): Fill => ({
  party: "alice::1220ab",
  otherParty: "bob::1220cd",
  parties: ["alice::1220ab", "bob::1220cd"],
  userId: "app",
  commandId: "load-x-flow-7-create",
  prefix: "load-x",
  iteration: 7,
  saved: new Map(Object.entries(saved)),
});

const dir = mkdtempSync(join(tmpdir(), "workflows-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = (text: string) => {
  const path = join(dir, `s${files++}.yaml`);
  writeFileSync(path, text);
  return path;
};

describe("workflow placeholders", () => {
  it("keep a whole placeholder's type, write others into text, and leave other values as they are", () => {
    const template = compileTemplate(
      {
        actAs: ["{{party}}"],
        parties: "{{parties}}",
        cid: "{{iou}}",
        note: "{{userId}} #{{iteration}} of {{ party }}",
        amount: 3,
        flag: true,
        none: null,
      },
      new Set(["iou"]),
    );
    assert.deepEqual(template(fill({ iou: { nested: 1 } })), {
      actAs: ["alice::1220ab"],
      parties: ["alice::1220ab", "bob::1220cd"],
      cid: { nested: 1 },
      note: "app #7 of alice::1220ab",
      amount: 3,
      flag: true,
      none: null,
    });
  });

  it("draw random values in their ranges, as the JSON Ledger API writes Int64 and Numeric (text)", () => {
    const template = compileTemplate(
      { i: "{{int:-3..3}}", d: "{{decimal:-1.5..2.25}}", t: "{{text:12}}", p: "{{pick:USD,EUR}}" },
      new Set(),
    );
    const seen = { i: new Set<string>(), p: new Set<string>() };
    for (let n = 0; n < 400; n++) {
      const value = template(fill()) as Record<string, string>;
      assert.match(value.i as string, /^-?\d$/);
      assert.ok(Number(value.i) >= -3 && Number(value.i) <= 3);
      assert.match(value.d as string, /^-?\d\.\d\d$/);
      assert.ok(Number(value.d) >= -1.5 && Number(value.d) <= 2.25, value.d);
      assert.match(value.t as string, /^[a-z0-9]{12}$/);
      seen.i.add(value.i as string);
      seen.p.add(value.p as string);
    }
    assert.equal(seen.i.size, 7, "every int of the range drawn");
    assert.deepEqual([...seen.p].sort(), ["EUR", "USD"]);
  });

  it("refuse a placeholder they do not know, or a name no earlier step saves, saying where", () => {
    assert.throws(
      () => compileTemplate({ commands: [{ owner: "{{partty}}" }] }, new Set()),
      /body\.commands\[0\]\.owner: \{\{partty\}\} is saved by no earlier step/,
    );
    assert.throws(() => compileTemplate("{{int:5..1}}", new Set()), /int takes MIN\.\.MAX/);
    assert.throws(
      () => compileTemplate("{{dice:6}}", new Set()),
      /\{\{dice:6\}\} is not a placeholder \(party, /,
    );
  });

  it("read JSON pointers as RFC 6901 has them", () => {
    const answer = { transaction: { events: [{ "a/b": { "c~d": 1 } }] } };
    assert.equal(readPointer(answer, "/transaction/events/0/a~1b/c~0d"), 1);
    assert.equal(readPointer(answer, "/transaction/events/1"), undefined);
    assert.equal(readPointer(answer, "/transaction/events/x"), undefined);
  });
});

describe("a scenario file", () => {
  const step = `
      - name: create
        post: /v2/commands/submit-and-wait-for-transaction
        body: { commands: { commandId: "{{commandId}}", actAs: ["{{party}}"] } }
        save: { iou: { created: Main:Asset } }`;

  it("reads its scenarios, weights and rates, in YAML or JSON", () => {
    const yaml = readScenarioFile(
      file(
        `scenarios:\n  flow:\n    weight: 2\n    steps:${step}\n  other:\n    rate: 5/s\n    steps:${step}\n`,
      ),
    );
    assert.deepEqual(
      yaml.map((s) => [s.workflow.name, s.weight, s.rate, s.workflow.steps.map((x) => x.name)]),
      [
        ["flow", 2, undefined, ["create"]],
        ["other", undefined, "5/s", ["create"]],
      ],
    );
    const json = readScenarioFile(
      file(
        JSON.stringify({ scenarios: { flow: { steps: [{ name: "end", get: "/v2/state/ledger-end" }] } } }),
      ),
    );
    assert.equal(json[0]?.workflow.steps[0]?.method, "GET");
  });

  it("names the file, the scenario, the step and the fault", () => {
    const refused = (text: string, message: RegExp) => {
      const path = file(text);
      assert.throws(
        () => readScenarioFile(path),
        (error: Error) => error.message.startsWith(`${path}: `) && message.test(error.message),
      );
    };
    refused(
      `scenarios:\n  flow:\n    steps:${step}\n      - name: use\n        post: /v2/x\n        body: { cid: "{{iuo}}" }\n`,
      /scenario flow: step 2 \(use\): body\.cid: \{\{iuo\}\} is saved by no earlier step \(saved before it: iou\)/,
    );
    refused(
      `scenarios:\n  flow:\n    steps:\n      - name: a\n        put: /v2/x\n`,
      /scenario flow: step 1 \(a\): unknown key put \(known: name, post, get, body, save\)/,
    );
    refused(
      `scenarios:\n  flow:\n    steps:\n      - name: a\n        body: {}\n`,
      /scenario flow: step 1 \(a\): give one of post: PATH or get: PATH/,
    );
    refused(
      `scenarios:\n  flow:\n    weight: 0\n    steps:${step}\n`,
      /scenario flow: weight is a whole number of at least 1/,
    );
    refused(
      `scenarios:\n  Flow:\n    steps:${step}\n`,
      /scenario name 'Flow': lowercase letters and hyphens/,
    );
    refused(
      `scenarios:\n  flow:\n    steps:\n      - name: a\n        post: v2/x\n`,
      /step 1 \(a\): path 'v2\/x' does not start with \//,
    );
    refused(`scenarios: [`, /not YAML or JSON/);
    refused(`steps: []`, /needs `scenarios:`/);
  });
});

describe("the mix and the parties on the command line", () => {
  it("shares the rate by weights in an interleaved cycle", () => {
    assert.deepEqual(
      weightedCycle([
        { name: "a", weight: 3 },
        { name: "b", weight: 1 },
      ]),
      ["a", "a", "b", "a"],
    );
    const mix = parseMix("iou-transfer=3,iou-merge@300/m", (text) => (text === "300/m" ? 5 : Number.NaN));
    assert.deepEqual(
      [...mix.values()],
      [
        { name: "iou-transfer", weight: 3 },
        { name: "iou-merge", ratePerSecond: 5 },
      ],
    );
    assert.throws(() => parseMix("a=0", Number), /whole weight of at least 1/);
    assert.throws(() => parseMix("a:3", Number), /NAME=WEIGHT or NAME@RATE/);
  });

  it("takes weights from --mix, the scenario file or 1, and runs a file's scenarios when none is named", () => {
    const path = file(
      `scenarios:\n  flow:\n    weight: 2\n    steps:${plainStep()}\n  slow:\n    rate: 2/s\n    steps:${plainStep()}\n`,
    );
    const all = loadOptions(raw({ "scenario-file": path }));
    assert.deepEqual(all.mix, [
      { name: "flow", weight: 2 },
      { name: "slow", ratePerSecond: 2 },
    ]);
    assert.deepEqual(all.requests, []);
    const mixed = loadOptions(
      raw({ "scenario-file": path, scenario: "submit-and-wait,updates", mix: "flow=5,iou-split=1" }),
    );
    assert.deepEqual(mixed.mix, [
      { name: "submit-and-wait", weight: 1 },
      { name: "flow", weight: 5 },
      { name: "iou-split", weight: 1 },
    ]);
    assert.deepEqual(
      mixed.workflows.map((w) => w.name),
      ["flow", "iou-split"],
    );
    assert.deepEqual(loadOptions(raw()).mix, [{ name: "submit-and-wait", weight: 1 }]);
    refusedOptions(
      { mix: "iou-merge@5/s", concurrency: "4" },
      /iou-merge has a rate of its own: that is the open model's/,
    );
    refusedOptions(
      { scenario: "iou-transfer,updates" },
      /updates measures the lag of the commands of submit-and-wait, /,
    );
    refusedOptions(
      { mix: "updates=2" },
      /--mix weighs request scenarios and workflows; updates is a stream scenario/,
    );
    refusedOptions(
      { scenario: "iou-nope" },
      /unknown scenario iou-nope; known: .*iou-transfer, iou-split, iou-merge, iou-lifecycle, iou-archive/,
    );
  });

  it("acts as --party parties, each with its own token, the run's, or the per-party command's", () => {
    const own = loadOptions(raw({ "token-file": undefined, party: ["alice::1=a.jwt,bob::2=b.jwt"] }));
    assert.deepEqual(own.parties, [
      { party: "alice::1", token: { file: "a.jwt" } },
      { party: "bob::2", token: { file: "b.jwt" } },
    ]);
    assert.deepEqual(own.token, { file: "a.jwt" }, "the first party's token is the run's");
    const command = loadOptions(raw({ party: ["alice::1", "bob::2=b.jwt"], "party-token-command": "mint" }));
    assert.deepEqual(command.parties, [
      { party: "alice::1", token: { command: "mint", party: "alice::1" } },
      { party: "bob::2", token: { file: "b.jwt" } },
    ]);
    assert.deepEqual(loadOptions(raw({ party: ["alice::1"] })).parties, [{ party: "alice::1" }]);
    assert.equal(loadOptions(raw({ "prepare-parties": "2" })).prepareParties, 2);
    refusedOptions(
      { "token-file": undefined, party: ["alice::1=a.jwt", "bob::2"] },
      /for the parties without a token of their own/,
    );
    refusedOptions(
      { party: ["alice::1"], "prepare-parties": "2" },
      /give --party .* or --prepare-parties N .*, not both/,
    );
    refusedOptions({ party: ["alice::1", "alice::1"] }, /names a party twice/);
    refusedOptions({ "party-token-command": "mint" }, /goes with --party/);
  });
});

function plainStep(): string {
  return `
      - name: create
        post: /v2/commands/submit-and-wait
        body: { commandId: "{{commandId}}" }`;
}

function refusedOptions(over: Partial<RawOptions>, message: RegExp): void {
  assert.throws(
    () => loadOptions(raw(over)),
    (error: Error) => error instanceof UsageError && message.test(error.message),
  );
}
