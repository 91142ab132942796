import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's root folder (the one holding package.json and protos/).
 * Code runs both from src/ (tsx) and from dist/src/ (compiled), so walk up rather than
 * hard-code a depth.
 */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "protos"))) return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error("cannot find the ledger-json-gateway package root (package.json + protos/)");
    dir = parent;
  }
}

export const PROTO_DIR = join(projectRoot(), "protos");
