import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { projectRoot } from "../../src/proto/project-root.js";
import { fencedBlocks, markdownLinks } from "../docs/markdown.js";

/**
 * The README runs top to bottom, and the guides in docs/ after it. Their ```sh blocks are one
 * shell session against a fresh `make run`: this test builds the gateway as `make run` does,
 * starts `node dist/src/cli.js` (embedded sandbox) on an ephemeral port, and runs every block in
 * order in one bash with `set -euo pipefail` and GW pointing at that gateway. `curl` is wrapped:
 * any HTTP answer outside 2xx fails the block, unless the command prints its status itself with
 * `-w` (that is how the README documents an error). ```bash blocks are shown, not run.
 */
const ROOT = projectRoot();
const run = promisify(execFile);

/**
 * The files of the session: README.md, then the guides in the order its "Where to read on" list
 * links them. That list is the order a reader follows, so the session is what a reader runs; a
 * second list here could drift from it. A guide with sh blocks that the list leaves out fails
 * the first test rather than drop out of the session unseen.
 */
function sessionFiles(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Where to read on\n");
  assert.ok(start >= 0, 'README.md has no "## Where to read on" section');
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const guides = markdownLinks(section)
    .map(({ target }) => target)
    .filter((target) => /^docs\/[\w-]+\.md$/.test(target));
  return ["README.md", ...new Set(guides)];
}

interface ShellBlock {
  /** The file it is in, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the block's first command in its file. */
  readonly line: number;
  readonly text: string;
}

function shellBlocks(file: string): ShellBlock[] {
  return fencedBlocks(readFileSync(join(ROOT, file), "utf8"))
    .filter((block) => block.lang === "sh")
    .map(({ line, text }) => ({ file, line, text }));
}

const sessionBlocks = () => sessionFiles().flatMap(shellBlocks);

/** Wraps curl: -sS, and every HTTP status it gets recorded; a non-2xx one fails the call. */
const CURL_WRAPPER = String.raw`
curl() {
  local arg
  for arg in "$@"; do
    case "$arg" in -w | --write-out) command curl "$@"; return ;; esac
  done
  local err rc=0 status failed=0
  err=$(mktemp)
  command curl -sS "$@" -w '%{stderr}README_HTTP_STATUS %{http_code}\n' 2>"$err" || rc=$?
  grep -v '^README_HTTP_STATUS ' "$err" >&2 || true
  for status in $(sed -n 's/^README_HTTP_STATUS //p' "$err"); do
    echo "$status curl $*" >>"$README_CALLS"
    if [[ ! "$status" =~ ^2 ]]; then
      echo "HTTP $status from: curl $*" >>"$README_FAILURES"
      failed=1
    fi
  done
  rm -f "$err"
  if ((rc != 0)); then echo "curl exited $rc: curl $*" >>"$README_FAILURES"; return "$rc"; fi
  return "$failed"
}
`;

function sessionScript(blocks: readonly ShellBlock[], stateDir: string): string {
  const parts = [
    "set -euo pipefail",
    `README_CALLS=${stateDir}/calls; README_FAILURES=${stateDir}/failures`,
    ": >$README_CALLS; : >$README_FAILURES",
    CURL_WRAPPER,
  ];
  blocks.forEach((block, i) => {
    parts.push(`echo ${i} >${stateDir}/block`, block.text);
  });
  parts.push(`echo done >${stateDir}/block`);
  return parts.join("\n");
}

/** `make run`'s gateway (embedded sandbox), on an ephemeral port read from its start-up log line. */
async function startGateway(): Promise<{ child: ChildProcess; port: number }> {
  // Stopped as teardown: no lame duck to wait through.
  const child = spawn(process.execPath, ["dist/src/cli.js", "--port", "0", "--server.drain-delay", "0s"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`the gateway exited (${code}) before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      const logged = JSON.parse(line) as { msg?: string; port?: number };
      if (logged.msg === "gateway listening" && typeof logged.port === "number") {
        lines.on("line", () => undefined);
        return logged.port;
      }
    }
    throw new Error("the gateway closed its output before listening");
  })();
  return { child, port: await Promise.race([listening, exited]) };
}

describe("README and the guides, one sh session", () => {
  let gateway: { child: ChildProcess; port: number } | undefined;
  let stateDir: string;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "readme-"));
    // `make run` builds first; so does this test, so that `node dist/src/cli.js` is this tree.
    await run("npm", ["run", "-s", "build"], { cwd: ROOT, timeout: 180_000 });
    gateway = await startGateway();
  });

  after(async () => {
    if (gateway && gateway.child.exitCode === null) {
      gateway.child.kill("SIGTERM");
      await once(gateway.child, "exit");
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("marks its runnable examples as sh blocks, and has enough of them", () => {
    const blocks = sessionBlocks();
    assert.ok(blocks.length >= 8, `only ${blocks.length} sh blocks`);
    assert.equal(blocks[0]?.file, "README.md");
    assert.match(blocks[0]?.text ?? "", /^GW=\$\{GW:-http:\/\/127\.0\.0\.1:7575\}$/m);
    assert.doesNotMatch(blocks.map((b) => b.text).join("\n"), /\bmake (run|test)\b/);
  });

  it("runs every guide's sh blocks, each guide saying at its top that they continue the README's", () => {
    const session = sessionFiles();
    const guides = readdirSync(join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`);
    for (const guide of guides.filter((file) => shellBlocks(file).length > 0)) {
      assert.ok(
        session.includes(guide),
        `${guide} has sh blocks, but README's "Where to read on" does not link it`,
      );
      const top = readFileSync(join(ROOT, guide), "utf8").split("\n").slice(0, 8).join("\n");
      assert.match(top, /continue the \[README's\s+session\]\(\.\.\/README\.md#quickstart\)/, guide);
    }
  });

  it("runs every sh block in order against a fresh gateway, every call answered 2xx", async () => {
    const blocks = sessionBlocks();
    const script = join(stateDir, "session.sh");
    writeFileSync(script, sessionScript(blocks, stateDir));
    const port = gateway?.port as number;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const bash = spawn("bash", [script], {
        cwd: ROOT,
        env: { ...process.env, GW: `http://127.0.0.1:${port}` },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      bash.stderr.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-8000);
      });
      const timer = setTimeout(() => bash.kill("SIGKILL"), 120_000);
      bash.once("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
    const reached = readFileSync(join(stateDir, "block"), "utf8").trim();
    const failures = readFileSync(join(stateDir, "failures"), "utf8").trim();
    const redact = (text: string) => text.replace(/Bearer [\w.-]+/g, "Bearer <token>");
    if (result.code !== 0 || reached !== "done" || failures !== "") {
      const block = blocks[Number(reached)];
      assert.fail(
        `sh block at ${block ? `${block.file}:${block.line}` : "?"} failed (bash exit ${result.code}):\n` +
          `${redact(failures)}\n--- block ---\n${block?.text ?? reached}\n--- stderr (tail) ---\n${redact(result.stderr)}`,
      );
    }
    const calls = readFileSync(join(stateDir, "calls"), "utf8").trim().split("\n");
    assert.ok(calls.length >= 40, `only ${calls.length} curl calls ran`);
  });
});
