import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { projectRoot } from "../../src/proto/project-root.js";
import { until } from "../support/until.js";
import { underBuildLock } from "./build-lock.js";

/**
 * The package as a user installs it: `npm pack` (prepack builds dist/), then `npm install -g` of
 * the tarball into a prefix of its own, then its `ledger-json-gateway` run from a folder that is
 * not the checkout, so that nothing of the repository can stand in for what the tarball lacks.
 */
const ROOT = projectRoot();
const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

interface PackedFile {
  readonly path: string;
  readonly size: number;
}

describe("the npm package, installed from its tarball", () => {
  let work: string;
  let files: readonly PackedFile[];
  let tarballBytes: number;
  let cli: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "npm-package-"));
    const packed = await underBuildLock(
      "npm",
      ["pack", "--json", "--pack-destination", work, "--loglevel=warn"],
      { cwd: ROOT, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
    );
    // prepack's own output (the build) may precede the JSON.
    const [entry] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as {
      filename: string;
      size: number;
      files: PackedFile[];
    }[];
    assert.ok(entry);
    files = entry.files;
    tarballBytes = entry.size;
    const prefix = join(work, "prefix");
    await run(
      "npm",
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        join(work, entry.filename),
      ],
      { cwd: work, timeout: 300_000 },
    );
    cli = join(prefix, "bin", "ledger-json-gateway");
  });

  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it("holds what the installed CLI runs and no tests, bench sources or scripts", (t) => {
    t.diagnostic(`tarball: ${files.length} files, ${tarballBytes} bytes packed`);
    const paths = files.map((file) => file.path);
    for (const needed of [
      "bin/ledger-json-gateway.js",
      "dist/src/cli.js",
      "dist/src/sandbox/sandbox-worker.js",
      "dist/bench/load.js",
      "protos/com/daml/ledger/api/v2/update_service.proto",
      "schemas/components.json",
      "docs/streams.md",
      "deploy/container/Dockerfile",
      "package.json",
    ])
      assert.ok(paths.includes(needed), `the tarball lacks ${needed}`);
    const strays = paths.filter(
      (path) =>
        /^(test|bench|src|scripts|\.ci)\//.test(path) ||
        path.startsWith("dist/test/") ||
        /\.(ts|map|tsbuildinfo|tgz)$/.test(path),
    );
    assert.deepEqual(strays, []);
  });

  it("answers --help and --version on every command", async () => {
    const help = await run(cli, ["--help"], { cwd: work });
    assert.match(help.stdout, /^Usage:\n {2}ledger-json-gateway /);
    for (const command of [[], ["token"], ["bench"]]) {
      const answered = await run(cli, [...command, "--version"], { cwd: work });
      assert.equal(answered.stdout, `ledger-json-gateway ${version}\n`, command.join(" "));
    }
  });

  describe("serving on its embedded sandbox", () => {
    let gateway: ChildProcess;
    let stdout = "";
    let base: string;
    let token: string;

    before(async () => {
      gateway = spawn(cli, ["--port", "0", "--server.drain-delay", "0s"], {
        cwd: work,
        stdio: ["ignore", "pipe", "pipe"],
      });
      gateway.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      gateway.stderr?.resume();
      await until(() => /"msg":"gateway listening"/.test(stdout) || gateway.exitCode !== null, {
        budgetMs: 60_000,
        observed: () => stdout,
      });
      const listening = stdout
        .split("\n")
        .map((line) => (line.startsWith("{") ? (JSON.parse(line) as { msg?: string; port?: number }) : {}))
        .find((line) => line.msg === "gateway listening");
      assert.ok(listening?.port, stdout);
      base = `http://127.0.0.1:${listening.port}`;
      token = (
        await run(cli, ["token", "--user", "participant_admin", "--expires-in", "1h"], { cwd: work })
      ).stdout.trim();
    });

    after(async () => {
      if (gateway.exitCode === null) {
        gateway.kill("SIGKILL");
        await once(gateway, "exit");
      }
    });

    it("is ready, and answers a token of its token command", async () => {
      let ready = 0;
      await until(
        async () => {
          ready = (await fetch(`${base}/readyz`)).status;
          return ready === 200;
        },
        { budgetMs: 30_000, observed: () => String(ready) },
      );
      const end = await fetch(`${base}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(end.status, 200);
      assert.deepEqual(await end.json(), { offset: 0 });
    });

    it("serves the guides of docs/ from the package", async () => {
      const guide = await fetch(`${base}/docs/streams.md`);
      assert.equal(guide.status, 200);
      assert.match(await guide.text(), /^# /);
    });

    it("runs the load tester against it", async () => {
      const tokenFile = join(work, "token.jwt");
      writeFileSync(tokenFile, token);
      const bench = await run(
        cli,
        [
          "bench",
          ...["--url", base, "--token-file", tokenFile],
          ...["--scenario", "submit-and-wait,updates", "--rate", "20/s", "--subscribers", "2"],
          ...["--duration", "3s", "--warm-up", "0s", "--out", join(work, "bench")],
        ],
        { cwd: work, timeout: 120_000 },
      );
      // Its summary: a line per scenario, with what it did and its errors.
      const submitted = /^submit-and-wait: (\d+) at .*, errors (\d+)/m.exec(bench.stdout);
      assert.ok(submitted, bench.stdout);
      assert.ok(Number(submitted[1]) > 0, bench.stdout);
      assert.equal(submitted[2], "0", bench.stdout);
      assert.match(bench.stdout, /^updates: \d+ .*, errors 0/m);
    });

    it("writes one JSON object per line on stdout, from start to stop", async () => {
      gateway.kill("SIGTERM");
      const [code] = await once(gateway, "exit");
      assert.equal(code, 0);
      const lines = stdout.trimEnd().split("\n");
      for (const line of lines) assert.equal(typeof JSON.parse(line), "object", line);
      assert.equal((JSON.parse(lines.at(-1) as string) as { msg: string }).msg, "stopped");
    });
  });
});
