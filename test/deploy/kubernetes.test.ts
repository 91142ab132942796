import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { parse, parseAllDocuments } from "yaml";
import { loadConfig } from "../../src/config/load-config.js";
import { drainBoundMs } from "../../src/gateway.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { debianBinary } from "./debian-package.js";

/**
 * deploy/kubernetes renders (`kubectl kustomize`: the installed kubectl, else Debian's
 * kubernetes-client, whose kubectl embeds kustomize) and every object it renders is valid
 * against the Kubernetes schemas (kubernetes-models' validators). The objects agree with
 * each other and with the gateway: selectors, probes under the path prefix, the config file
 * the gateway itself accepts, the Secret it reads its keys from, the grace period its drain needs.
 * deploy/kubernetes/monitoring, apart from base (which must apply without the Prometheus
 * Operator's CRDs), is the alerting rules of deploy/prometheus as a PrometheusRule: valid against
 * the operator's schema (@kubernetes-models/prometheus-operator), its groups those of the rules file.
 */
const ROOT = projectRoot();
const run = promisify(execFile);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are checked field by field below
  [field: string]: any;
}

async function render(kubectl: string, dir: string): Promise<K8sObject[]> {
  const { stdout } = await run(kubectl, ["kustomize", join(ROOT, dir)], { timeout: 60_000 });
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** Where the models of API groups outside Kubernetes' own live. */
const CRD_MODELS: Record<string, string> = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

/** The kubernetes-models class of an object, by apiVersion and kind. */
async function validateAgainstSchema(object: K8sObject): Promise<void> {
  const [group, version] = object.apiVersion.includes("/")
    ? object.apiVersion.split("/")
    : [undefined, object.apiVersion];
  const library = (group && CRD_MODELS[group]) || "kubernetes-models";
  const module = `${library}/${group ? `${group}/` : ""}${version}/${object.kind}`;
  const models = (await import(module)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = models[object.kind];
  assert.ok(Model, `${module} exports no ${object.kind}`);
  // Newer kustomize wraps a Secret's base64 over lines; Go's decoder (the API server's) skips newlines.
  const data =
    object.kind === "Secret" && object.data
      ? {
          ...object,
          data: Object.fromEntries(
            Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s/g, "")]),
          ),
        }
      : object;
  new Model(data).validate();
}

const kubectl = await debianBinary("kubectl", "kubernetes-client");
const skip = typeof kubectl === "string" ? false : kubectl.skip;

describe("Kubernetes manifests (deploy/kubernetes)", { skip }, () => {
  for (const dir of ["deploy/kubernetes/base", "deploy/kubernetes/overlays/example"]) {
    it(`${dir} renders and every object is valid against the Kubernetes schemas`, async () => {
      const objects = await render(kubectl as string, dir);
      assert.deepEqual(
        objects.map((o) => o.kind).sort(),
        dir.endsWith("base")
          ? ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service"]
          : [
              "ConfigMap",
              "Deployment",
              "HorizontalPodAutoscaler",
              "PodDisruptionBudget",
              "Secret",
              "Service",
            ],
      );
      for (const object of objects) {
        await assert.doesNotReject(validateAgainstSchema(object), `${object.kind} ${object.metadata.name}`);
      }
    });
  }

  it("deploy/kubernetes/monitoring renders the alerting rules as a valid PrometheusRule, groups as in deploy/prometheus", async () => {
    const objects = await render(kubectl as string, "deploy/kubernetes/monitoring");
    assert.deepEqual(
      objects.map((o) => `${o.apiVersion} ${o.kind}`),
      ["monitoring.coreos.com/v1 PrometheusRule"],
    );
    const [rule] = objects as [K8sObject];
    await assert.doesNotReject(validateAgainstSchema(rule), `PrometheusRule ${rule.metadata.name}`);
    assert.equal(rule.metadata.labels?.["app.kubernetes.io/name"], "ledger-json-gateway");
    const rulesFile = parse(
      readFileSync(join(ROOT, "deploy", "prometheus", "ledger-json-gateway.rules.yml"), "utf8"),
    ) as { groups: unknown[] };
    assert.ok(rulesFile.groups.length > 0);
    assert.deepEqual(rule.spec.groups, rulesFile.groups, "the PrometheusRule's groups are the rules file's");
  });

  it("the schema validation catches a broken object", async () => {
    const [deployment] = (await render(kubectl as string, "deploy/kubernetes/base")).filter(
      (o) => o.kind === "Deployment",
    );
    deployment!.spec.template.spec.containers[0].ports[0].containerPort = "http";
    await assert.rejects(validateAgainstSchema(deployment!), /containerPort must be integer/);
    const [rule] = await render(kubectl as string, "deploy/kubernetes/monitoring");
    rule!.spec.groups[0].rules[0].for = "two minutes";
    await assert.rejects(validateAgainstSchema(rule!), /for must match pattern/);
  });

  it("the example overlay's objects fit together and fit the gateway", async () => {
    const objects = await render(kubectl as string, "deploy/kubernetes/overlays/example");
    const one = (kind: string) => {
      const found = objects.filter((o) => o.kind === kind);
      assert.equal(found.length, 1, kind);
      return found[0] as K8sObject;
    };
    const deployment = one("Deployment");
    const service = one("Service");
    const hpa = one("HorizontalPodAutoscaler");
    const pdb = one("PodDisruptionBudget");
    const configMap = one("ConfigMap");
    const secret = one("Secret");
    for (const o of objects) assert.equal(o.metadata.namespace, "ledger", `${o.kind} namespace`);

    const pod = deployment.spec.template;
    const podLabels = pod.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => podLabels[k] === v);
    assert.ok(selects(deployment.spec.selector.matchLabels), "Deployment selector");
    assert.ok(selects(service.spec.selector), "Service selector");
    assert.ok(selects(pdb.spec.selector.matchLabels), "PodDisruptionBudget selector");
    assert.ok(pdb.spec.minAvailable >= 1);
    assert.deepEqual(hpa.spec.scaleTargetRef, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: deployment.metadata.name,
    });
    assert.equal(hpa.spec.metrics[0].resource.name, "cpu");
    assert.ok(hpa.spec.minReplicas > pdb.spec.minAvailable, "a disruption may take one replica");
    assert.equal(deployment.spec.replicas, undefined, "the HPA owns the replica count");

    // The gateway accepts the config file the ConfigMap holds, and the pod matches it.
    const [container] = pod.spec.containers;
    assert.deepEqual(container.args, ["--config", "/etc/ledger-json-gateway/gateway.yaml"]);
    const config = loadConfig({
      argv: container.args,
      env: {},
      readFile: () => configMap.data["gateway.yaml"],
    });
    assert.equal(config.server.address, "0.0.0.0", "reachable from the Service");
    assert.equal(container.ports[0].containerPort, config.server.port);
    assert.equal(container.ports[0].name, service.spec.ports[0].targetPort);
    const prefix = config.server.pathPrefix;
    assert.equal(prefix, "/api");
    assert.equal(container.livenessProbe.httpGet.path, `${prefix}/livez`);
    assert.equal(container.startupProbe.httpGet.path, `${prefix}/livez`);
    assert.equal(container.readinessProbe.httpGet.path, `${prefix}/readyz`);
    assert.equal(pod.metadata.annotations["prometheus.io/path"], `${prefix}/metrics`);
    assert.equal(pod.metadata.annotations["prometheus.io/port"], String(config.server.port));
    assert.ok(container.resources.requests.cpu, "the HPA's CPU utilization needs a CPU request");

    // Volumes name the generated (hash-suffixed) ConfigMap and Secret; the JWKS file is in the Secret.
    const volume = (name: string) => pod.spec.volumes.find((v: { name: string }) => v.name === name);
    const mount = (name: string) =>
      container.volumeMounts.find((m: { name: string }) => m.name === name).mountPath as string;
    assert.equal(volume("config").configMap.name, configMap.metadata.name);
    assert.equal(volume("auth").secret.secretName, secret.metadata.name);
    assert.equal(config.auth.mode, "rs256");
    const jwksFile = config.auth.jwksFile as string;
    assert.equal(jwksFile, `${mount("auth")}/${Object.keys(secret.data)[0]}`);
    const jwks = JSON.parse(Buffer.from(secret.data["jwks.json"], "base64").toString("utf8"));
    assert.equal(jwks.keys[0].kty, "RSA");
    assert.equal(jwks.keys[0].d, undefined, "a public key only");

    // SIGTERM: the gateway's lame duck (/readyz 503 while the Service and proxies stop routing
    // here), then its drain of the requests in flight; the grace period covers both, and the exit.
    assert.equal(container.lifecycle?.preStop, undefined, "the lame duck does a preStop sleep's job");
    assert.ok(config.server.drainDelayMs > 0, "a lame duck on SIGTERM");
    const shutdownSeconds = (config.server.drainDelayMs + drainBoundMs(config)) / 1000;
    assert.ok(
      pod.spec.terminationGracePeriodSeconds >= shutdownSeconds + 5,
      `the grace period (${pod.spec.terminationGracePeriodSeconds} s) covers the lame duck and the drain (${shutdownSeconds} s) and the exit`,
    );
  });
});
