/**
 * Just enough Markdown for the tests of the README and the guides in docs/: fenced blocks, links
 * and the anchors GitHub gives headings. Code (fenced blocks, inline code spans) is not text: a
 * `[x](y)` or a `# comment` there is neither a link nor a heading.
 */

export interface FencedBlock {
  /** The info string: `sh`, `bash`, `json`, ... */
  readonly lang: string;
  /** 1-based line of the block's first line of code. */
  readonly line: number;
  readonly text: string;
}

/** The fenced code blocks (``` only; the files use no other fence), in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  for (const match of markdown.matchAll(/^ *```(\S*)\n([\s\S]*?)^ *```$/gm)) {
    const line = markdown.slice(0, match.index).split("\n").length + 1;
    blocks.push({ lang: match[1] as string, line, text: match[2] as string });
  }
  return blocks;
}

/** The text with every fenced block and inline code span blanked, lines kept where they were. */
function prose(markdown: string): string {
  const blank = (code: string) => code.replace(/[^\n]/g, " ");
  return markdown.replace(/^ *```[\s\S]*?^ *```$/gm, blank).replace(/`+[^`\n]*`+/g, blank);
}

export interface MarkdownLink {
  /** 1-based line the link starts on. */
  readonly line: number;
  readonly target: string;
}

/** Every inline link and image target and every link reference definition, in order. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const text = prose(markdown);
  const lineOf = (index: number) => text.slice(0, index).split("\n").length;
  const links: MarkdownLink[] = [];
  // `[label](target "title")`; the label may span lines and hold an image, `[![alt](img)](href)`.
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ line: lineOf(match.index), target: match[1] as string });
  }
  for (const match of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) {
    links.push({ line: lineOf(match.index), target: match[1] as string });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** A link to another file or a place in this one: no scheme (`https:`, `mailto:`), not `//host`. */
export function isRelative(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//");
}

/**
 * GitHub's anchor of a heading (github-slugger): the text as rendered (no link targets, code
 * ticks or emphasis marks), lower case, every character but letters, digits, `_`, `-` and spaces
 * dropped, spaces to `-`.
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/**
 * The anchors a file offers: each ATX heading's slug (a repeated one gets `-1`, `-2`, ... as on
 * GitHub) and each explicit `<a id="...">` / `<a name="...">`.
 */
export function anchors(markdown: string): Set<string> {
  const text = markdown.replace(/^ *```[\s\S]*?^ *```$/gm, "");
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const slug = headingSlug(match[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1] as string);
  return found;
}
