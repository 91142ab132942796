import type { Prng } from "./prng.js";

/**
 * Mutations of a JSON value, done on the value and finished as text, so that they can also
 * produce what JSON.stringify cannot (integers past 2^53 as written, NaN, duplicate keys,
 * nesting past any recursion limit). Each returns the text and a label saying what it did.
 */
export interface MutatedText {
  text: string;
  label: string;
}

type Path = (string | number)[];

/** Every node of `value` with its path (the root included). */
function nodes(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) nodes(item, [...path, i], out);
  } else if (value !== null && typeof value === "object")
    for (const [key, item] of Object.entries(value)) nodes(item, [...path, key], out);
  return out;
}

function describe(path: Path): string {
  return path.length === 0
    ? "(root)"
    : path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}

function setAt(root: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path[path.length - 1] as string | number] = replacement;
  return copy;
}

/** Raw JSON text spliced in where a marker string stands. */
const RAW = (n: number) => `__fuzz_raw_${n}__`;

export const HUGE_SIZES = [1_000, 10_000, 70_000, 100_000] as const;

export function hugeString(rng: Prng, size: number): string {
  return rng.pick(["a", "0", "é", "𝕏", ":"]).repeat(size);
}

const ODD_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\u202eevil",
  "\uffff\ufffe",
  "👍🏽👨‍👩‍👧",
  "𝕏".repeat(300),
  "é".repeat(500),
  "../../etc/passwd",
  "%00%ff",
  "<script>",
  "$" + "{jndi:x}",
  "\r\n\r\nGET / HTTP/1.1",
  "-1",
  "0x10",
  "1e309",
  "null",
  "true",
  "#gateway-samples:Iou:Iou",
  "#",
  "::",
  "a::b::c",
];

const WRONG_TYPES: unknown[] = [0, -1, 1.5, "x", true, false, null, [], {}, [null], { "": null }];

const RAW_NUMBERS = [
  "18446744073709551616",
  "18446744073709551615",
  "9223372036854775808",
  "-9223372036854775809",
  "9007199254740993",
  "3000000000",
  "-2147483649",
  "4294967296",
  "1e308",
  "-1e308",
  "1e999",
  "-0",
  "1e-400",
  "0.1",
  "1.5e3",
  "123456789012345678901234567890",
];

const BROKEN_LITERALS = [
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  "01",
  "1.",
  ".5",
  "+1",
  "0x1F",
  "'x'",
  "tru",
];

/** One structural mutation at a random node. */
export function mutateValue(value: unknown, rng: Prng, sizes: readonly number[] = HUGE_SIZES): MutatedText {
  const all = nodes(value);
  const path = rng.pick(all);
  const at = describe(path);
  const raws: string[] = [];
  const raw = (text: string) => {
    raws.push(text);
    return RAW(raws.length - 1);
  };
  let mutated: unknown;
  let label: string;
  switch (rng.int(11)) {
    case 0: {
      const replacement = rng.pick(WRONG_TYPES);
      mutated = setAt(value, path, replacement);
      label = `wrong type ${JSON.stringify(replacement)} at ${at}`;
      break;
    }
    case 1: {
      const size = rng.pick(sizes);
      mutated = setAt(value, path, hugeString(rng, size));
      label = `string of ${size} characters at ${at}`;
      break;
    }
    case 2: {
      const odd = rng.pick(ODD_STRINGS);
      mutated = setAt(value, path, odd);
      label = `odd string ${JSON.stringify(odd.slice(0, 40))} at ${at}`;
      break;
    }
    case 3: {
      const number = rng.pick(RAW_NUMBERS);
      mutated = setAt(value, path, raw(number));
      label = `number ${number} at ${at}`;
      break;
    }
    case 4: {
      const literal = rng.pick(BROKEN_LITERALS);
      mutated = setAt(value, path, raw(literal));
      label = `invalid literal ${literal} at ${at}`;
      break;
    }
    case 5: {
      const depth = rng.pick([64, 1_000, 10_000, 100_000]);
      const [open, close] = rng.chance(0.5) ? ["[", "]"] : ['{"a":', "}"];
      mutated = setAt(value, path, raw(`${open.repeat(depth)}1${close.repeat(depth)}`));
      label = `nesting ${depth} deep at ${at}`;
      break;
    }
    case 6: {
      if (path.length === 0) return mutateValue(value, rng, sizes);
      const parentPath = path.slice(0, -1);
      const key = path[path.length - 1] as string | number;
      const copy = structuredClone(value) as Record<string | number, unknown>;
      let parent = copy;
      for (const k of parentPath) parent = parent[k] as Record<string | number, unknown>;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      mutated = copy;
      label = `removed ${at}`;
      break;
    }
    case 7: {
      const key = rng.pick(["unknownField", "__proto__", "constructor", "", "a".repeat(1000), "𝕏"]);
      const target = rng.pick(all.filter((p) => isObjectAt(value, p)).concat([[]]));
      const node = getAt(value, target);
      const extra = { ...(isPlainObject(node) ? node : {}), [key]: rng.pick(WRONG_TYPES) };
      mutated = setAt(value, target, extra);
      label = `extra key ${JSON.stringify(key.slice(0, 20))} at ${describe(target)}`;
      break;
    }
    case 8: {
      const item = JSON.stringify(getAt(value, path) ?? 0);
      // At most about 4 MB: the point is many elements, not a big body.
      const count = Math.min(rng.pick([100, 10_000, 100_000]), Math.floor(4_000_000 / (item.length + 1)));
      mutated = setAt(value, path, raw(`[${Array.from({ length: count }, () => item).join(",")}]`));
      label = `array of ${count} copies at ${at}`;
      break;
    }
    case 9: {
      const target = rng.pick(all.filter((p) => isObjectAt(value, p)).concat([[]]));
      const node = getAt(value, target);
      const keys = isPlainObject(node) ? Object.keys(node) : [];
      if (keys.length === 0) return mutateValue(value, rng, sizes);
      const key = rng.pick(keys);
      const body = JSON.stringify(node);
      mutated = setAt(
        value,
        target,
        raw(`${body.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(rng.pick(WRONG_TYPES))}}`),
      );
      label = `duplicate key ${key} at ${describe(target)}`;
      break;
    }
    default: {
      const big = rng.pick([1e6, 2 ** 53 + 2, -(2 ** 63), 2 ** 64, 2 ** 31, -(2 ** 31) - 1]);
      mutated = setAt(value, path, big);
      label = `number ${big} at ${at}`;
    }
  }
  let text = JSON.stringify(mutated) ?? "";
  raws.forEach((rawText, i) => {
    text = text.replace(JSON.stringify(RAW(i)), rawText);
  });
  return { text, label };
}

function getAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node;
}

function isPlainObject(node: unknown): node is Record<string, unknown> {
  return node !== null && typeof node === "object" && !Array.isArray(node);
}

function isObjectAt(root: unknown, path: Path): boolean {
  return isPlainObject(getAt(root, path));
}

/** A mutation of the text itself: truncation, stray bytes, invalid UTF-8, other documents. */
export function mutateText(text: string, rng: Prng): { bytes: Buffer; label: string } {
  const bytes = Buffer.from(text, "utf8");
  switch (rng.int(8)) {
    case 0: {
      const at = rng.int(Math.max(1, bytes.length));
      return { bytes: bytes.subarray(0, at), label: `truncated at byte ${at} of ${bytes.length}` };
    }
    case 1: {
      const at = rng.int(bytes.length + 1);
      const stray = rng.bytes(rng.between(1, 8));
      return {
        bytes: Buffer.concat([bytes.subarray(0, at), stray, bytes.subarray(at)]),
        label: `bytes ${stray.toString("hex")} inserted at ${at}`,
      };
    }
    case 2: {
      const invalid = rng.pick(["ff", "c0af", "eda080", "f4908080", "80", "e282"]);
      const quote = bytes.indexOf(0x22, rng.int(Math.max(1, bytes.length)));
      const at = quote < 0 ? bytes.length : quote + 1;
      return {
        bytes: Buffer.concat([bytes.subarray(0, at), Buffer.from(invalid, "hex"), bytes.subarray(at)]),
        label: `invalid UTF-8 ${invalid} at ${at}`,
      };
    }
    case 3: {
      const doc = rng.pick([
        "",
        " ",
        "null",
        "[]",
        '"text"',
        "123",
        "{",
        "}",
        "{}{}",
        "\n\t",
        "[{}]",
        "true",
      ]);
      return { bytes: Buffer.from(doc), label: `body ${JSON.stringify(doc)}` };
    }
    case 4:
      return { bytes: Buffer.concat([Buffer.from("efbbbf", "hex"), bytes]), label: "UTF-8 BOM first" };
    case 5: {
      const tail = rng.pick(["x", "{}", "\u0000", " ,", "]"]);
      return { bytes: Buffer.from(text + tail), label: `trailing ${JSON.stringify(tail)}` };
    }
    case 6:
      return { bytes: Buffer.from(text, "utf16le"), label: "UTF-16LE" };
    default: {
      const at = rng.int(Math.max(1, bytes.length));
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[at] = rng.int(256);
      return { bytes: copy, label: `byte ${at} changed` };
    }
  }
}
