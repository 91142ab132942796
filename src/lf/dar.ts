/**
 * DAR files: zip archives holding a main .dalf, its dependencies and a manifest that says
 * which is which. Only the manifest and the listed .dalf entries are read; sources,
 * interface files and data that damlc also packs are ignored.
 */
import { unzipSync, zipSync } from "fflate";
import { DarError } from "./errors.js";
import { formatManifest, parseManifest } from "./manifest.js";
import { decodeDalf } from "./package-decode.js";
import type { PackageSignature } from "./signature-model.js";

export const MANIFEST_PATH = "META-INF/MANIFEST.MF";

interface DarEntry {
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface DarContents {
  readonly manifest: ReadonlyMap<string, string>;
  readonly main: DarEntry;
  readonly dependencies: readonly DarEntry[];
}

/**
 * How much a DAR may hold once inflated. Canton refuses an entry of 1 GB or more as a possible
 * zip bomb (daml-lf GenDarReader); held in memory, even that much from a 1 MB upload is too much
 * for the sandbox, which runs inside the gateway's process by default. The listed entries
 * together may hold 256 MiB: damlc's largest DARs (a project with the standard library and
 * its dependencies) are a few tens of MiB.
 */
const MAX_DAR_CONTENT_BYTES = 256 * 1024 * 1024;
/** Entries in the zip's directory, read or not: each costs a header parse. */
const MAX_DAR_ENTRIES = 65_535;

function unzip(bytes: Uint8Array, wanted: (name: string) => boolean): Record<string, Uint8Array> {
  let entries = 0;
  let inflated = 0;
  try {
    return unzipSync(bytes, {
      // Sizes are checked before anything is inflated: fflate inflates an entry into a buffer
      // of the size the zip declares for it, and never past it (a zip that lies about an
      // entry's size gets it cut short, and the archive check of its .dalf refuses it).
      filter: (file) => {
        if (++entries > MAX_DAR_ENTRIES) throw zipBomb();
        if (!wanted(file.name)) return false;
        inflated += file.originalSize;
        if (inflated > MAX_DAR_CONTENT_BYTES) throw zipBomb();
        return true;
      },
    });
  } catch (cause) {
    if (cause instanceof DarError) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new DarError("not-a-zip", `not a DAR: the file is not a readable zip archive (${reason})`, {
      cause,
    });
  }
}

/** Canton's words (daml-lf archive Error.ZipBomb). */
const zipBomb = (): DarError =>
  new DarError("zip-bomb", "An entry is too large, rejected as a possible zip bomb");

/** Reads the manifest and the .dalf entries it lists, without decoding them. */
export function readDar(bytes: Uint8Array): DarContents {
  const manifestEntry = unzip(bytes, (name) => name === MANIFEST_PATH)[MANIFEST_PATH];
  if (manifestEntry === undefined) {
    throw new DarError("missing-manifest", `not a DAR: the zip has no ${MANIFEST_PATH}`);
  }
  const manifest = parseManifest(new TextDecoder().decode(manifestEntry));
  const format = manifest.get("Format");
  if (format !== undefined && format.trim() !== "daml-lf") {
    throw new DarError(
      "unsupported-format",
      `unsupported DAR format ${JSON.stringify(format)} (expected daml-lf)`,
    );
  }
  const mainPath = manifest.get("Main-Dalf")?.trim();
  if (!mainPath) throw new DarError("missing-main-dalf", `the DAR manifest has no Main-Dalf attribute`);
  const listed = (manifest.get("Dalfs") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const dependencyPaths = listed.filter((p) => p !== mainPath);
  const needed = new Set([mainPath, ...dependencyPaths]);
  const files = unzip(bytes, (name) => needed.has(name));
  const entry = (path: string): DarEntry => {
    const content = files[path];
    if (content === undefined) {
      throw new DarError("missing-entry", `the DAR manifest lists ${path}, but the zip has no such entry`);
    }
    return { path, bytes: content };
  };
  return { manifest, main: entry(mainPath), dependencies: dependencyPaths.map(entry) };
}

export interface DecodedDar {
  readonly main: PackageSignature;
  readonly dependencies: readonly PackageSignature[];
}

/** Reads a DAR and decodes (and verifies) every listed package. */
export function decodeDar(bytes: Uint8Array): DecodedDar {
  const contents = readDar(bytes);
  return {
    main: decodeDalf(contents.main.bytes),
    dependencies: contents.dependencies.map((d) => decodeDalf(d.bytes)),
  };
}

export interface DarPackage {
  /** Package name (for the main package, also its metadata name). */
  readonly name: string;
  readonly version?: string;
  readonly packageId: string;
  readonly dalf: Uint8Array;
}

/**
 * A fixed, local-time modification date: zip stores local DOS time, so building the Date
 * from local fields gives identical bytes in every time zone (and a stable DAR).
 */
const FIXED_MTIME = new Date(2000, 0, 1, 0, 0, 0);

/** Writes a DAR in damlc's layout: `<name>-<version>-<id>/` holding every .dalf. */
export function writeDar(
  main: DarPackage & { readonly version: string },
  dependencies: readonly DarPackage[] = [],
): Uint8Array {
  const dir = `${main.name}-${main.version}-${main.packageId}`;
  const mainPath = `${dir}/${dir}.dalf`;
  const depPaths = dependencies.map((d) => `${dir}/${d.name}-${d.packageId}.dalf`);
  const manifest = formatManifest([
    ["Manifest-Version", "1.0"],
    ["Created-By", "ledger-json-gateway"],
    ["Name", `${main.name}-${main.version}`],
    ["Main-Dalf", mainPath],
    ["Dalfs", [mainPath, ...depPaths].join(", ")],
    ["Format", "daml-lf"],
    ["Encryption", "non-encrypted"],
  ]);
  const files: Record<string, Uint8Array> = { [MANIFEST_PATH]: new TextEncoder().encode(manifest) };
  files[mainPath] = main.dalf;
  dependencies.forEach((d, i) => {
    files[depPaths[i] as string] = d.dalf;
  });
  return zipSync(files, { mtime: FIXED_MTIME, level: 6 });
}
