import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { freePort } from "../../bench/lib/free-port.js";
import { mintToken } from "../../src/jwt/mint-token.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { fencedBlocks } from "../docs/markdown.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";
import { until } from "../support/until.js";
import { underBuildLock } from "./build-lock.js";
import { debianPackages } from "./debian-package.js";

/**
 * deploy/container/Dockerfile built and run here, where no container registry can be reached:
 * its default base images are stand-ins made locally (container-stand-in.sh: Debian 13 by
 * debootstrap, Node 24 from the npm registry) and kept in a cache outside the clone, with the
 * container storage, so that a later run on this machine only builds the gateway's image. The
 * image is built by buildah from the context `make image` lays out, and run by podman (runc):
 * the README's first commands against it on Node 24, its lame duck and clean exit on SIGTERM,
 * and a second container in front of a ledger outside it, configured by environment and flags.
 */
const ROOT = projectRoot();
const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

/** Target size of the image (issue 37), in bytes as podman counts them. */
const MAX_IMAGE_BYTES = 250_000_000;

const CACHE = "/var/cache/ledger-json-gateway/containers";
/**
 * Storage of its own: the overlay driver (this machine's ext4 takes it) in the cache, so that the
 * stand-ins outlive the run and nothing touches the machine's default storage.
 */
const STORAGE_CONF = join(CACHE, "storage.conf");
const env = { ...process.env, CONTAINERS_STORAGE_CONF: STORAGE_CONF };

/**
 * This machine's podman: runc (crun fails on its hybrid cgroups), and explicit limits, since
 * podman's defaults are above what a process without CAP_SYS_RESOURCE may set here.
 */
const PODMAN_RUN = [
  ...["--runtime", "runc", "run", "--detach"],
  ...["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"],
  // As the Kubernetes manifests run it.
  ...["--read-only", "--cap-drop", "ALL"],
];

const tools = await debianPackages(["buildah", "podman", "runc", "debootstrap"]);
if (tools !== true)
  process.stderr.write(`\n*** container-image.test.ts cannot build the image: ${tools.skip} ***\n\n`);

const command = (file: string, args: readonly string[], timeout = 120_000) =>
  run(file, args, { cwd: ROOT, env, timeout, maxBuffer: 16 * 1024 * 1024 });
const podman = (args: readonly string[], timeout?: number) => command("podman", args, timeout);

/** Seconds since `start`, for the phase timings the test reports. */
const since = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)} s`;

describe("the container image, built and run", { skip: tools === true ? false : tools.skip }, () => {
  const image = `localhost/ledger-json-gateway:${version}-test-${process.pid}`;
  const containers: string[] = [];
  let context: string;
  let sandbox: SandboxProcess | undefined;
  const timings: string[] = [];

  before(async () => {
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(
      STORAGE_CONF,
      `[storage]\ndriver = "overlay"\ngraphroot = "${CACHE}/storage"\nrunroot = "/run/ledger-json-gateway-containers"\n`,
    );
    let start = Date.now();
    // One maker at a time: two runs on one machine share the cache.
    const standIn = await command(
      "flock",
      [join(CACHE, "stand-in.lock"), "bash", "test/deploy/container-stand-in.sh", CACHE],
      600_000,
    );
    timings.push(`${standIn.stdout.trim()} in ${since(start)}`);
    start = Date.now();
    context = mkdtempSync(join(tmpdir(), "image-context-"));
    await underBuildLock("bash", ["deploy/container/prepare-context.sh", context], {
      cwd: ROOT,
      timeout: 300_000,
    });
    timings.push(`context laid out in ${since(start)}`);
    start = Date.now();
    const revision = (await command("git", ["rev-parse", "HEAD"])).stdout.trim();
    await command(
      "buildah",
      [
        ...["bud", "--isolation", "chroot", "--pull=never", "--layers=false", "--quiet"],
        ...["-f", "deploy/container/Dockerfile", "--build-arg", `VERSION=${version}`],
        ...["--build-arg", `REVISION=${revision}`, "-t", image, context],
      ],
      300_000,
    );
    timings.push(`image built in ${since(start)}`);
  });

  after(async () => {
    await sandbox?.stop();
    for (const name of containers) await podman(["rm", "--force", name]).catch(() => undefined);
    await podman(["rmi", "--force", image]).catch(() => undefined);
    if (context) rmSync(context, { recursive: true, force: true });
  });

  /** Starts a container of the image; resolves with its name. */
  async function startContainer(args: readonly string[]): Promise<string> {
    const name = `ledger-json-gateway-test-${process.pid}-${containers.length}`;
    containers.push(name);
    await podman([...PODMAN_RUN, "--name", name, ...args]);
    return name;
  }

  async function readyz(base: string, status: number): Promise<void> {
    let seen = "";
    await until(
      async () => {
        seen = await fetch(`${base}/readyz`).then(
          (res) => String(res.status),
          (error: Error) => error.message,
        );
        return seen === String(status);
      },
      { budgetMs: 60_000, observed: () => seen },
    );
  }

  it("is at most 250 MB, runs as the manifests' user with the gateway's port, labelled with its version and commit", async (t) => {
    for (const timing of timings) t.diagnostic(timing);
    const [inspected] = JSON.parse((await podman(["image", "inspect", image])).stdout) as {
      Size: number;
      Config: {
        User: string;
        ExposedPorts: Record<string, unknown>;
        Entrypoint: string[];
        Labels: Record<string, string>;
      };
    }[];
    assert.ok(inspected);
    t.diagnostic(`image size: ${inspected.Size} bytes (${(inspected.Size / 1e6).toFixed(1)} MB)`);
    assert.ok(inspected.Size <= MAX_IMAGE_BYTES, `${inspected.Size} bytes`);
    assert.equal(inspected.Config.User, "10001:10001");
    assert.deepEqual(Object.keys(inspected.Config.ExposedPorts), ["7575/tcp"]);
    assert.deepEqual(inspected.Config.Entrypoint, ["ledger-json-gateway"]);
    assert.equal(inspected.Config.Labels["org.opencontainers.image.version"], version);
    assert.equal(
      inspected.Config.Labels["org.opencontainers.image.revision"],
      (await command("git", ["rev-parse", "HEAD"])).stdout.trim(),
    );
  });

  describe("on its embedded sandbox, port published", () => {
    let name: string;
    let base: string;

    before(async () => {
      name = await startContainer(["--publish", "127.0.0.1::7575", image]);
      const published = (await podman(["port", name, "7575"])).stdout.trim();
      base = `http://${published.split("\n")[0]}`;
      await readyz(base, 200);
    });

    it("runs Node 24 and answers --version", async () => {
      assert.match((await podman(["exec", name, "node", "--version"])).stdout, /^v24\./);
      assert.equal(
        (await podman(["exec", name, "ledger-json-gateway", "--version"])).stdout,
        `ledger-json-gateway ${version}\n`,
      );
    });

    it("answers the README's first commands", async () => {
      const [first] = fencedBlocks(readFileSync(join(ROOT, "README.md"), "utf8")).filter(
        (block) => block.lang === "sh",
      );
      assert.ok(first);
      // Any answer outside 2xx fails the block (-f), as in test/readme/readme.test.ts.
      const session = await run(
        "bash",
        ["-c", `set -euo pipefail\ncurl() { command curl -sSf "$@"; echo; }\n${first.text}`],
        { cwd: ROOT, env: { ...env, GW: base }, timeout: 60_000 },
      ).catch((error: { stderr?: string; message: string }) => {
        throw new Error(
          `the README's first sh block failed against ${base}: ${error.stderr ?? error.message}`,
        );
      });
      assert.match(session.stdout, /"version":"3\.5\.10"/);
      assert.match(session.stdout, /^\{"offset":0\}$/m);
      assert.match(session.stdout, /"synchronizerAlias":"synchronizer-2"/);
    });

    it("accepts a token of its own token command", async () => {
      const token = (await podman(["exec", name, "ledger-json-gateway", "token"])).stdout.trim();
      const end = await fetch(`${base}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(end.status, 200);
    });

    it("plays lame duck on SIGTERM, still serving, then exits 0 within its grace", async () => {
      const token = mintToken({ user: "participant_admin", secret: "secret", expiresInSeconds: 600 });
      // podman stop: SIGTERM, then SIGKILL after the grace (137 instead of 0).
      const stop = spawn("podman", ["stop", "--time", "40", name], { env, stdio: "ignore" });
      const stopped = once(stop, "exit");
      await readyz(base, 503);
      const during = await fetch(`${base}/v2/state/ledger-end`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(during.status, 200);
      assert.deepEqual(await stopped, [0, null]);
      const state = (await podman(["inspect", name, "--format", "{{.State.ExitCode}}"])).stdout.trim();
      assert.equal(state, "0");
      const logs = await podman(["logs", name]);
      // stdout: one JSON object per line; the admin token banner is on stderr.
      const lines = logs.stdout.trimEnd().split("\n");
      const entries = lines.map((line) => JSON.parse(line) as { msg: string });
      assert.ok(
        entries.some((entry) => entry.msg.startsWith("lame duck")),
        logs.stdout,
      );
      assert.equal(entries.at(-1)?.msg, "stopped");
      assert.match(logs.stderr, /Admin token/);
      assert.doesNotMatch(logs.stderr, /Warning/);
    });
  });

  describe("in front of a ledger outside it", () => {
    let base: string;
    let name: string;

    before(async () => {
      sandbox = await startSandboxProcess();
      const port = await freePort();
      // The host's network: the sandbox listens on loopback only.
      name = await startContainer([
        ...["--network", "host", "--env", `LEDGER_GATEWAY_LEDGER_TARGET=127.0.0.1:${sandbox.port}`],
        ...[image, "--address", "127.0.0.1", "--port", String(port), "--server.drain-delay", "0s"],
      ]);
      base = `http://127.0.0.1:${port}`;
      await readyz(base, 200);
    });

    it("serves it, and is unready when it goes away", async () => {
      const token = mintToken({ user: "participant_admin", secret: "secret", expiresInSeconds: 600 });
      const parties = await fetch(`${base}/v2/parties`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ partyIdHint: "outside" }),
      });
      assert.equal(parties.status, 200);
      const logs = (await podman(["logs", name])).stdout;
      assert.doesNotMatch(logs, /embedded sandbox/);
      assert.match(logs, new RegExp(`"ledger":"127\\.0\\.0\\.1:${sandbox?.port}"`));
      await sandbox?.stop();
      await readyz(base, 503);
    });
  });
});
