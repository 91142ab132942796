import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonArrayBytes } from "../../src/http/json-array-bytes.js";

const build = (texts: string[], chunkBytes?: number) => {
  const array = new JsonArrayBytes(chunkBytes);
  for (const text of texts) array.push(text);
  const { chunks, length } = array.end();
  const bytes = Buffer.concat(chunks);
  return { text: bytes.toString("utf8"), length, bytesLength: bytes.length, chunks: chunks.length };
};

describe("JsonArrayBytes", () => {
  it("writes [] for no element and [a,b] for two", () => {
    deepStrictEqual(build([]), { text: "[]", length: 2, bytesLength: 2, chunks: 1 });
    strictEqual(build(['{"a":1}', '"b"']).text, '[{"a":1},"b"]');
  });

  it("keeps multi-byte texts whole across buffer ends, texts larger than a buffer included", () => {
    const texts = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ i, s: "é€😀".repeat(i % 7), big: i % 50 === 0 ? "ü".repeat(300) : "" }),
    );
    const built = build(texts, 64);
    strictEqual(built.text, `[${texts.join(",")}]`);
    strictEqual(built.length, Buffer.byteLength(built.text));
    strictEqual(built.bytesLength, built.length);
    strictEqual(built.chunks > 1, true);
  });

  it("ends exactly at a buffer's end", () => {
    // "[" + 6 bytes fills a buffer of 7: "]" goes into the next one.
    const built = build(['"abcd"'], 7);
    deepStrictEqual({ text: built.text, length: built.length }, { text: '["abcd"]', length: 8 });
  });
});
