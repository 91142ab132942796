import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../bench/lib/free-port.js";
import { projectRoot } from "../../src/proto/project-root.js";

export interface ShippedNginx {
  /** Where nginx listens, on 127.0.0.1. */
  port: number;
  stop(): Promise<void>;
}

/**
 * deploy/nginx/ledger-json-gateway.conf as shipped (only its upstream servers and listen address
 * replaced), run by the `nginx` binary from a temporary prefix in front of the gateways on
 * `upstreamPorts`; resolves once `livezPath` answers 200 through it.
 */
export async function startShippedNginx(
  nginx: string,
  upstreamPorts: readonly number[],
  livezPath: string,
): Promise<ShippedNginx> {
  const dir = mkdtempSync(join(tmpdir(), "nginx-"));
  // nginx's workers run as nobody when the test is root: they write their temp files here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(join(dir, "gateway.conf"), shippedConfig(port, upstreamPorts));
  writeFileSync(
    join(dir, "nginx.conf"),
    [
      "worker_processes 1;",
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      "daemon off;",
      "events { worker_connections 256; }",
      "http {",
      `  access_log ${dir}/access.log;`,
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${dir}/${t};`),
      `  include ${dir}/gateway.conf;`,
      "}",
    ].join("\n"),
  );
  const proxy = spawn(nginx, ["-p", dir, "-e", `${dir}/error.log`, "-c", `${dir}/nginx.conf`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proxy.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stop = async () => {
    if (proxy.exitCode === null && proxy.signalCode === null) {
      const exited = once(proxy, "exit");
      proxy.kill("SIGQUIT");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  while ((await fetch(`http://127.0.0.1:${port}${livezPath}`).catch(() => undefined))?.status !== 200) {
    if (proxy.exitCode !== null || Date.now() > deadline) {
      const log = readFileSync(join(dir, "error.log"), "utf8");
      await stop();
      throw new Error(`nginx did not serve: ${stderr}${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port, stop };
}

function shippedConfig(port: number, upstreamPorts: readonly number[]): string {
  const shipped = readFileSync(join(projectRoot(), "deploy", "nginx", "ledger-json-gateway.conf"), "utf8");
  const servers = /^( +)server 127\.0\.0\.1:7575;\n +server 127\.0\.0\.1:7576;$/m;
  const listen = /^( +)listen 80;$/m;
  assert.match(shipped, servers);
  assert.match(shipped, listen);
  return shipped
    .replace(servers, (_, indent: string) =>
      upstreamPorts.map((upstream) => `${indent}server 127.0.0.1:${upstream};`).join("\n"),
    )
    .replace(listen, (_, indent: string) => `${indent}listen 127.0.0.1:${port};`);
}
