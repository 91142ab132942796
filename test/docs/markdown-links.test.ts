import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "../../src/proto/project-root.js";
import { anchors, headingSlug, isRelative, markdownLinks } from "./markdown.js";

const ROOT = projectRoot();

/** README.md and the guides in docs/, the files a reader follows links through. */
function documents(root: string): string[] {
  const guides = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...guides];
}

/**
 * Each relative link of `files` (paths under `root`) whose file does not exist or, where it has
 * a `#fragment` into a Markdown file, whose heading or anchor that file lacks, as
 * `file:line: target (why)`.
 */
function brokenLinks(root: string, files: readonly string[]): string[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (path: string) => {
    let found = anchorsOf.get(path);
    if (!found) {
      found = anchors(readFileSync(path, "utf8"));
      anchorsOf.set(path, found);
    }
    return found;
  };
  const broken: string[] = [];
  for (const file of files) {
    const source = join(root, file);
    for (const { line, target } of markdownLinks(readFileSync(source, "utf8"))) {
      if (!isRelative(target)) continue;
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = pathPart === "" ? source : join(dirname(source), pathPart);
      const where = `${file}:${line}: ${target}`;
      if (!existsSync(path)) {
        broken.push(`${where} (no file ${relative(root, path)})`);
      } else if (fragment !== undefined && path.endsWith(".md") && !anchorsIn(path).has(fragment)) {
        broken.push(`${where} (no heading or anchor #${fragment} in ${relative(root, path)})`);
      }
    }
  }
  return broken;
}

describe("links of the README and the guides", () => {
  it("every relative link names a file that exists, and a heading of it where it has a #fragment", () => {
    const files = documents(ROOT);
    assert.ok(files.length > 10, `only ${files.join(", ")}`);
    assert.deepEqual(brokenLinks(ROOT, files), []);
  });

  it("finds a missing file, a missing heading of another file and of the same file", () => {
    const root = mkdtempSync(join(tmpdir(), "links-"));
    try {
      mkdirSync(join(root, "docs"));
      writeFileSync(
        join(root, "README.md"),
        [
          "# Title",
          "[ok](docs/a.md) [ok](docs/a.md#a-guides-part) [ok](#title) [web](https://example.com/x.md)",
          "[gone](docs/gone.md) and",
          "[no heading](docs/a.md#nowhere), [not here](#a-guides-part)",
          "`[code](docs/gone.md)`",
          "```sh",
          "echo '[code](docs/gone.md)'",
          "```",
        ].join("\n"),
      );
      writeFileSync(join(root, "docs", "a.md"), "# A\n\n## A guide's part\n\n[back](../README.md#title)\n");
      assert.deepEqual(brokenLinks(root, documents(root)), [
        "README.md:3: docs/gone.md (no file docs/gone.md)",
        "README.md:4: docs/a.md#nowhere (no heading or anchor #nowhere in docs/a.md)",
        "README.md:4: #a-guides-part (no heading or anchor #a-guides-part in README.md)",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("gives headings GitHub's anchors: lower case, punctuation dropped, spaces to '-', repeats numbered", () => {
    assert.equal(headingSlug("Differences from Canton's JSON API"), "differences-from-cantons-json-api");
    assert.equal(headingSlug("Streams: WebSocket and list twins"), "streams-websocket-and-list-twins");
    assert.equal(
      headingSlug("Prometheus alerting rules (`prometheus/`)"),
      "prometheus-alerting-rules-prometheus",
    );
    assert.equal(
      headingSlug("The [README](README.md) *itself*, 2-3 times_x"),
      "the-readme-itself-2-3-times_x",
    );
    assert.deepEqual(
      [...anchors('# A\n\n## Notes\n\n```sh\n# Notes\n```\n\n## Notes\n\n<a id="custom"></a>text\n')],
      ["a", "notes", "notes-1", "custom"],
    );
  });
});
