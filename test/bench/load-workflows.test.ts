import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { LoadResult } from "../../bench/load/load-result.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";
import { type BenchRun, runBench } from "./bench-process.js";

const ROOT = projectRoot();

/** The application user's token, valid five minutes as Canton's participants accept them. */
const appToken = () => signToken("load-app", { exp: Math.floor(Date.now() / 1000) + 300 });

const load = (...args: string[]) => runBench(args);

/**
 * The scenario file docs/load-testing.md gives users to copy (its first YAML block): an Iou created
 * with random values, an observer added to it (the contract id saved from the create's answer by
 * JSON pointer), the successor that choice created (saved by template) given to the other party,
 * and a read. The test runs what the guide shows.
 */
function guideScenarioFile(): string {
  const guide = readFileSync(join(ROOT, "docs", "load-testing.md"), "utf8");
  const section = guide.slice(guide.indexOf("## Your own application: a scenario file"));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(block, "the guide has a scenario file");
  return block[1] as string;
}

interface Iou {
  issuer: string;
  owner: string;
  currency: string;
  amount: string;
  observers: string[];
}

describe("the load tool's workflows, as a least-privileged application user", () => {
  let stack: Stack;
  let dir: string;
  let parties: [string, string];
  let run: BenchRun;
  let result: LoadResult;
  const adminCalls = () =>
    [
      "PartyManagementService/AllocateParty",
      "UserManagementService/GrantUserRights",
      "UserManagementService/RevokeUserRights",
    ]
      .map((method) => stack.sandbox.calls.started(method))
      .join(",");
  let adminCallsBefore: string;

  /** A call that must succeed: an admin's, or with `token` another user's. */
  const call = async <T>(method: string, path: string, body?: unknown, token?: string): Promise<T> => {
    const res = await stack.request(path, {
      method,
      ...(body !== undefined && { body: JSON.stringify(body) }),
      ...(token !== undefined && { token }),
    });
    const answer = (await res.json()) as T;
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(answer)}`);
    return answer;
  };

  before(async () => {
    stack = await startStack();
    dir = mkdtempSync(join(tmpdir(), "load-workflows-"));
    // The application's parties and its user, made by an admin as production's would be: the
    // user may act as its two parties and has no admin right.
    const allocate = async (hint: string) =>
      (await call<{ partyDetails: { party: string } }>("POST", "/v2/parties", { partyIdHint: hint }))
        .partyDetails.party;
    parties = [await allocate("app-alice"), await allocate("app-bob")];
    await call("POST", "/v2/users", {
      user: { id: "load-app", primaryParty: parties[0] },
      rights: parties.map((party) => ({ kind: { CanActAs: { value: { party } } } })),
    });
    const tokenFile = join(dir, "app.jwt");
    writeFileSync(tokenFile, appToken());
    const scenarioFile = join(dir, "scenarios.yaml");
    writeFileSync(scenarioFile, guideScenarioFile());
    adminCallsBefore = adminCalls();
    run = await load(
      ...["--url", stack.url, "--token-file", tokenFile, "--party", parties.join(",")],
      ...[
        "--scenario-file",
        scenarioFile,
        "--mix",
        "iou-transfer=3,iou-archive=1,iou-split=1,iou-lifecycle=1,observe=2,iou-merge@4/s",
      ],
      ...[
        "--rate",
        "30/s",
        "--duration",
        "3s",
        "--warm-up",
        "0",
        "--interval",
        "1s",
        "--out",
        join(dir, "out"),
      ],
      ...["--threshold", "errors<1"],
    );
    const [json] = readdirSync(join(dir, "out")).filter((name) => name.endsWith(".json"));
    result = JSON.parse(readFileSync(join(dir, "out", json as string), "utf8")) as LoadResult;
  });
  after(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs as a user with no admin right, and makes no admin call", async () => {
    const denied = await stack.request("/v2/parties", { token: appToken() });
    assert.equal(denied.status, 403, "the user is no admin");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(adminCalls(), adminCallsBefore, "no party allocated, no right granted or revoked");
    assert.match(
      run.stderr,
      /acting as app-alice::\S+ \(user load-app\), app-bob::\S+ \(user load-app\), no admin call/,
    );
    assert.equal(result.overall.errors, 0, JSON.stringify(result.scenarios));
  });

  it("runs the mix: each scenario by its weight, the one with a rate of its own at its rate", () => {
    assert.deepEqual(result.load.scenarios, [
      "iou-transfer",
      "iou-archive",
      "iou-split",
      "iou-lifecycle",
      "observe",
      "iou-merge",
    ]);
    const count = (name: string) => result.scenarios[name]?.requests ?? 0;
    // 30/s for 3 s shared 3:1:1:1:2, in an interleaved cycle of 8.
    const shared = ["iou-transfer", "iou-archive", "iou-split", "iou-lifecycle", "observe"]
      .map(count)
      .reduce((a, b) => a + b);
    assert.ok(shared >= 80 && shared <= 95, `shared: ${shared}`);
    assert.ok(
      Math.abs(count("iou-transfer") - 3 * count("iou-archive")) <= 3,
      JSON.stringify(result.scenarios),
    );
    assert.ok(Math.abs(count("observe") - 2 * count("iou-split")) <= 2);
    assert.ok(Math.abs(count("iou-lifecycle") - count("iou-split")) <= 1);
    assert.ok(count("iou-merge") >= 10 && count("iou-merge") <= 14, `iou-merge: ${count("iou-merge")}`);
    assert.match(
      result.load.description,
      /iou-transfer=3 \+ iou-archive=1 \+ iou-split=1 \+ iou-lifecycle=1 \+ observe=2 \+ iou-merge@4\/s/,
    );
  });

  it("counts every step of every iteration, and the iteration as a whole", () => {
    const steps = {
      "iou-transfer": ["create", "transfer"],
      "iou-archive": ["create", "archive"],
      "iou-split": ["create", "split"],
      "iou-merge": ["create", "create-other", "merge"],
      "iou-lifecycle": ["create", "split", "merge", "transfer"],
      observe: ["create", "add-observer", "give", "ledger-end"],
    };
    for (const [name, names] of Object.entries(steps)) {
      const scenario = result.scenarios[name];
      assert.ok(scenario?.steps, name);
      assert.deepEqual(Object.keys(scenario.steps), names);
      for (const step of Object.values(scenario.steps)) {
        assert.equal(step.requests, scenario.requests, `${name}: every iteration ran each step`);
        assert.equal(step.errors, 0);
        // An iteration takes at least as long as any of its steps.
        assert.ok(step.latencyMs.p50 <= scenario.latencyMs.max, name);
      }
    }
  });

  it("leaves the ledger with the workflows' effects: archived gone, transfers the new owner's", async () => {
    const { offset } = await call<{ offset: number }>("GET", "/v2/state/ledger-end");
    // Read as the application's user: an admin reads no party's contracts without a right to.
    const entries = await call<
      { contractEntry: { JsActiveContract: { createdEvent: { createArgument: Iou } } } }[]
    >(
      "POST",
      "/v2/state/active-contracts",
      {
        activeAtOffset: offset,
        eventFormat: { filtersByParty: Object.fromEntries(parties.map((p) => [p, {}])), verbose: false },
      },
      appToken(),
    );
    const ious = entries.map((e) => e.contractEntry.JsActiveContract.createdEvent.createArgument);
    const count = (name: string) => result.scenarios[name]?.requests ?? 0;
    // Every iteration of the run was measured (no warm-up) and none failed: the ACS is exactly
    // what they leave. An archive leaves nothing, a split two, a merge one of two, a transfer one
    // (a lifecycle's split, merge and transfer: one).
    assert.equal(
      ious.length,
      count("iou-transfer") +
        2 * count("iou-split") +
        count("iou-merge") +
        count("iou-lifecycle") +
        count("observe"),
    );
    const given = ious.filter((iou) => iou.owner !== iou.issuer && iou.observers.length === 0);
    assert.equal(given.length, count("iou-transfer") + count("iou-lifecycle"));
    for (const iou of given) assert.deepEqual([iou.owner, iou.issuer].sort(), [...parties].sort());
    const observed = ious.filter((iou) => iou.observers.length === 1);
    assert.equal(observed.length, count("observe"));
    for (const iou of observed) {
      // The file's random values, and the owner the chain's last step gave it to.
      assert.ok(["USD", "EUR", "CHF"].includes(iou.currency), iou.currency);
      assert.ok(Number(iou.amount) >= 1 && Number(iou.amount) <= 500, iou.amount);
      assert.equal(iou.owner, iou.observers[0]);
      assert.notEqual(iou.owner, iou.issuer);
    }
    const kept = ious.filter((iou) => iou.owner === iou.issuer);
    assert.equal(kept.length, 2 * count("iou-split") + count("iou-merge"));
  });

  // Last: it adds contracts of its own to the parties' ACS, which the test before counts.
  it("acts as each party with that party's own token and user, with no token for the run itself", async () => {
    const tokenFiles: string[] = [];
    for (const [i, party] of parties.entries()) {
      const user = `load-app-${i}`;
      await call("POST", "/v2/users", {
        user: { id: user },
        rights: [{ kind: { CanActAs: { value: { party } } } }],
      });
      const file = join(dir, `${user}.jwt`);
      writeFileSync(file, signToken(user, { exp: Math.floor(Date.now() / 1000) + 300 }));
      tokenFiles.push(`${party}=${file}`);
    }
    const before = adminCalls();
    const own = await load(
      ...["--url", stack.url, "--party", tokenFiles.join(","), "--scenario", "iou-transfer"],
      ...[
        "--rate",
        "10/s",
        "--duration",
        "1s",
        "--warm-up",
        "0",
        "--interval",
        "1s",
        "--out",
        join(dir, "own"),
      ],
    );
    assert.equal(own.status, 0, own.stderr);
    assert.match(
      own.stderr,
      /acting as app-alice::\S+ \(user load-app-0\), app-bob::\S+ \(user load-app-1\), no admin call/,
    );
    assert.equal(adminCalls(), before);
    const [json] = readdirSync(join(dir, "own")).filter((name) => name.endsWith(".json"));
    const ownResult = JSON.parse(readFileSync(join(dir, "own", json as string), "utf8")) as LoadResult;
    const transfers = ownResult.scenarios["iou-transfer"];
    // Each iteration's commands carry its party's user: another user's would be refused.
    assert.ok(transfers && transfers.requests >= 8, JSON.stringify(transfers));
    assert.equal(transfers.errors, 0, JSON.stringify(transfers.errorsByCode));
  });
});
