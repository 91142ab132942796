import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../proto/project-root.js";

/**
 * The guides of the repository's docs/ folder (its *.md files, not its subfolders), served
 * read-only at /docs/<file>. The folder is found from the package root, so from src/ (tsx) and
 * from dist/src/ alike. A request names a file of the folder's listing, taken once when the
 * gateway starts, or gets the 404 of an unknown path: a name a client writes is never joined to
 * a path, so `..` and `%2F` reach nothing.
 */
export class Guides {
  /** The guides' file names, sorted: `architecture.md`, `commands-and-values.md`, ... */
  readonly files: readonly string[];
  readonly #dir: string;
  readonly #texts = new Map<string, string>();

  /** A copy without docs/ (only what running needs: dist/, protos/, schemas/) serves none. */
  constructor(dir = join(projectRoot(), "docs")) {
    this.#dir = dir;
    this.files = listMarkdown(dir);
  }

  /** A guide's text, read on its first request and kept; undefined for a name not in the listing. */
  text(file: string): string | undefined {
    if (!this.files.includes(file)) return undefined;
    let text = this.#texts.get(file);
    if (text === undefined) {
      text = readFileSync(join(this.#dir, file), "utf8");
      this.#texts.set(file, text);
    }
    return text;
  }

  /** Its first heading, else its file name. */
  title(file: string): string {
    return /^# +(.+?)[ #]*$/m.exec(this.text(file) ?? "")?.[1] ?? file;
  }
}

function listMarkdown(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
