/**
 * The Daml-LF archive schema, loaded once with protobufjs reflection from the .proto files
 * under `protos/com/digitalasset/daml/lf/archive`. Reflection (rather than generated code)
 * keeps the protos the single source of the wire format.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const ARCHIVE_PROTO_DIR = join("protos", "com", "digitalasset", "daml", "lf", "archive");

/** The repository's `protos/` may sit two (src/lf) or three (dist/src/lf) levels up. */
function findArchiveProtoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, ARCHIVE_PROTO_DIR);
    if (existsSync(join(candidate, "daml_lf2.proto"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${ARCHIVE_PROTO_DIR} above ${import.meta.url}`);
    dir = parent;
  }
}

export interface ArchiveSchema {
  readonly Archive: protobuf.Type;
  readonly ArchivePayload: protobuf.Type;
  readonly Package: protobuf.Type;
}

let schema: ArchiveSchema | undefined;

export function archiveSchema(): ArchiveSchema {
  if (schema === undefined) {
    const dir = findArchiveProtoDir();
    const root = new protobuf.Root().loadSync([join(dir, "daml_lf.proto"), join(dir, "daml_lf2.proto")], {
      keepCase: false,
    });
    root.resolveAll();
    schema = {
      Archive: root.lookupType("daml_lf.Archive"),
      ArchivePayload: root.lookupType("daml_lf.ArchivePayload"),
      Package: root.lookupType("daml_lf_2.Package"),
    };
  }
  return schema;
}
