import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectRoot } from "../../src/proto/project-root.js";
import { sampleDar } from "../../src/sandbox/sample-package/index.js";

/**
 * The sandbox's sample package as a file, for the README's package examples and for clients
 * that want to read its types: `make sample-dar` writes it, `sample-dar.test.ts` checks that
 * the committed file is still the DAR the sandbox builds in code.
 */
export const SAMPLE_DAR_PATH = join("docs", "samples", "gateway-samples-1.0.0.dar");

export function writeSampleDar(root = projectRoot()): string {
  const path = join(root, SAMPLE_DAR_PATH);
  writeFileSync(path, sampleDar);
  return path;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`wrote ${writeSampleDar()} (${sampleDar.length} bytes)\n`);
}
