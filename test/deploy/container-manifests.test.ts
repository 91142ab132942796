import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { projectRoot } from "../../src/proto/project-root.js";

/**
 * The Kubernetes manifests run the image that deploy/container/Dockerfile builds: its tag is the
 * package's version (make image), and they run it as the image's user on the image's port.
 */
const ROOT = projectRoot();
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const { version } = JSON.parse(read("package.json")) as { version: string };
const dockerfile = read("deploy/container/Dockerfile");

interface Container {
  name: string;
  image: string;
  ports: { name: string; containerPort: number }[];
}
const deployment = parse(read("deploy/kubernetes/base/deployment.yaml")) as {
  spec: {
    template: {
      spec: { securityContext: { runAsUser: number; runAsGroup: number }; containers: Container[] };
    };
  };
};
const pod = deployment.spec.template.spec;
const gateway = pod.containers.find((container) => container.name === "gateway") as Container;

/** The last instruction of that name in the Dockerfile's final stage, its arguments. */
function instruction(name: string): string {
  const lines = dockerfile.split("\n").filter((line) => line.startsWith(`${name} `));
  assert.ok(lines.length > 0, `the Dockerfile has no ${name}`);
  return (lines.at(-1) as string).slice(name.length + 1).trim();
}

describe("the Kubernetes manifests and the container image", () => {
  it("name the image make image builds: the package's version as tag", () => {
    assert.equal(gateway.image, `ledger-json-gateway:${version}`);
    const overlay = parse(read("deploy/kubernetes/overlays/example/kustomization.yaml")) as {
      images: { name: string; newTag: string }[];
    };
    const renamed = overlay.images.find((image) => image.name === "ledger-json-gateway");
    assert.equal(renamed?.newTag, version);
    assert.match(read("Makefile"), /^IMAGE \?= ledger-json-gateway:\$\(VERSION\)$/m);
  });

  it("run it as the image's user", () => {
    const [user, group] = instruction("USER").split(":").map(Number);
    assert.equal(pod.securityContext.runAsUser, user);
    assert.equal(pod.securityContext.runAsGroup, group);
  });

  it("send traffic to the port the image exposes, the one the gateway listens on", () => {
    const exposed = Number(instruction("EXPOSE"));
    assert.deepEqual(
      gateway.ports.map((port) => port.containerPort),
      [exposed],
    );
    const config = parse(read("deploy/kubernetes/base/gateway.yaml")) as { server: { port: number } };
    assert.equal(config.server.port, exposed);
  });
});
