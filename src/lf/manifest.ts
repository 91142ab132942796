/**
 * JAR-style manifest (META-INF/MANIFEST.MF) as DARs use it: `Key: value` lines of at most
 * 72 bytes, longer values continued on lines that start with one space.
 */
import { DarError } from "./errors.js";

const MAX_LINE_BYTES = 72;
const encoder = new TextEncoder();

/** Splits `text` into chunks of at most `max` UTF-8 bytes without cutting a character. */
function chunkByBytes(text: string, firstMax: number, restMax: number): string[] {
  const chunks: string[] = [];
  let current = "";
  let currentBytes = 0;
  let max = firstMax;
  for (const ch of text) {
    const n = encoder.encode(ch).length;
    if (currentBytes + n > max) {
      chunks.push(current);
      current = "";
      currentBytes = 0;
      max = restMax;
    }
    current += ch;
    currentBytes += n;
  }
  chunks.push(current);
  return chunks;
}

/** Renders attributes in the given order; every line ends with a newline. */
export function formatManifest(attributes: ReadonlyArray<readonly [string, string]>): string {
  let out = "";
  for (const [key, value] of attributes) {
    const [first, ...rest] = chunkByBytes(`${key}: ${value}`, MAX_LINE_BYTES, MAX_LINE_BYTES - 1);
    out += `${first}\n`;
    for (const line of rest) out += ` ${line}\n`;
  }
  return out;
}

/** Parses the main section (the attributes before the first blank line). */
export function parseManifest(text: string): Map<string, string> {
  const attributes = new Map<string, string>();
  let lastKey: string | undefined;
  const lines = text.split(/\r\n|\r|\n/);
  for (const [i, line] of lines.entries()) {
    if (line === "") {
      // A blank line ends the main section; per-entry sections after it are not used by DARs.
      if (attributes.size > 0) break;
      continue;
    }
    if (line.startsWith(" ")) {
      if (lastKey === undefined) {
        throw new DarError(
          "malformed-manifest",
          `manifest line ${i + 1}: continuation line without an attribute`,
        );
      }
      attributes.set(lastKey, `${attributes.get(lastKey) ?? ""}${line.slice(1)}`);
      continue;
    }
    const colon = line.indexOf(": ");
    if (colon <= 0) {
      throw new DarError(
        "malformed-manifest",
        `manifest line ${i + 1}: expected "Name: value", got ${JSON.stringify(line)}`,
      );
    }
    lastKey = line.slice(0, colon);
    attributes.set(lastKey, line.slice(colon + 2));
  }
  return attributes;
}
