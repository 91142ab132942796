/**
 * Canton keeps every error it puts on the wire small (facts: com.daml.error
 * SerializableErrorCodeComponents, ErrorCode.MaxErrorContentBytes): the serialized google.rpc.Status
 * stays within 4096 bytes, whatever a request echoed into the error. Its message, code id,
 * category, trace id and definite answer are always sent; the other context entries and the
 * resources share what is left: resources are kept in order while they fit (the rest dropped),
 * context values are cut, shortest entries first, to an equal share of the remaining bytes.
 *
 * Without this, a 100,000-character contract id echoed as a resource makes a trailer over
 * nghttp2's 64 KiB header-field limit, which kills the client's whole HTTP/2 session.
 */
export const MAX_ERROR_CONTENT_BYTES = 4096;

/** Canton truncates trace and correlation ids above this many characters. */
export const MAX_TRACE_ID_LENGTH = 256;

/** Tag and length prefix of one protobuf string field, at most. */
const PER_TAG_OVERHEAD = 5;
/** The Any wrapper and type URL of a packed ErrorInfo / ResourceInfo, empty. */
const ERROR_INFO_PACKING = 47;
const RESOURCE_INFO_PACKING = 54;

export interface ErrorContent {
  readonly message: string;
  readonly codeId: string;
  /** Always sent: category, tid, definite_answer. */
  readonly mandatoryContext: Readonly<Record<string, string>>;
  /** Cut to fit: participant, field_name and the error's own context. */
  readonly context: Readonly<Record<string, string>>;
  readonly resources: readonly (readonly [string, string])[];
  /** Encoded size of RequestInfo and RetryInfo, already packed. */
  readonly otherDetailsBytes: number;
}

export interface FittedContent {
  readonly context: Record<string, string>;
  readonly resources: [string, string][];
}

/** Canton's `truncateString`: at most `max` characters, the cut marked with `...`. */
export function truncateString(value: string, max: number): string {
  return value.length > max ? `${cutAt(value, Math.max(0, max - 3))}...` : value;
}

/** The first `length` UTF-16 units of `value`, one fewer if that would split a surrogate pair. */
export function cutAt(value: string, length: number): string {
  const last = value.charCodeAt(length - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

export function fitErrorContent(content: ErrorContent): FittedContent {
  const mandatory =
    1 +
    PER_TAG_OVERHEAD +
    packedSize([content.message, content.codeId, ...Object.entries(content.mandatoryContext).flat()]) +
    content.otherDetailsBytes +
    ERROR_INFO_PACKING;
  const entries = Object.entries(content.context).filter(([k, v]) => k !== "" && v !== "");
  const count = entries.length + content.resources.length;
  if (count === 0) return { context: {}, resources: [] };
  const forEntries = MAX_ERROR_CONTENT_BYTES - mandatory - 2 * PER_TAG_OVERHEAD * count;
  const forResources = Math.floor((content.resources.length * forEntries) / count);
  return {
    resources: fitResources(content.resources, forResources),
    context: fitContext(entries, forEntries - forResources),
  };
}

function fitResources(resources: ErrorContent["resources"], budget: number): [string, string][] {
  const kept: [string, string][] = [];
  let free = budget;
  for (const [type, name] of resources) {
    const cost = bytes(type) + bytes(name) + RESOURCE_INFO_PACKING;
    if (cost > free) continue;
    kept.push([type, name]);
    free -= cost;
  }
  return kept;
}

function fitContext(entries: [string, string][], budget: number): Record<string, string> {
  const sorted = [...entries].sort((a, b) => a[0].length + a[1].length - (b[0].length + b[1].length));
  const kept = new Map<string, [string, string]>();
  let free = budget;
  sorted.forEach(([key, value], index) => {
    const share = Math.floor(free / (sorted.length - index));
    let entry: [string, string] | undefined = [key, value];
    if (key.length + value.length > share) {
      // Fewer than 8 characters cannot hold a key, a value and their `...` marks.
      if (share <= 7) entry = undefined;
      else {
        const cutKey = truncateString(key, Math.floor(share / 2));
        entry = [cutKey, truncateString(value, share - cutKey.length)];
      }
    }
    if (entry === undefined) return;
    const size = bytes(entry[0]) + bytes(entry[1]);
    // Multi-byte characters can still overshoot: such an entry is dropped.
    if (size > share) return;
    kept.set(key, entry);
    free -= size;
  });
  // In the order the error gave them, as the JSON context shows them.
  const ordered = entries.map(([key]) => kept.get(key));
  return Object.fromEntries(ordered.filter((entry) => entry !== undefined));
}

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
const packedSize = (strings: string[]): number =>
  strings.reduce((sum, s) => sum + bytes(s) + PER_TAG_OVERHEAD, 0);
