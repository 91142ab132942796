/**
 * google.protobuf.Timestamp <-> ISO-8601 text as the JSON API writes it: UTC with `Z`, the
 * fraction in groups of three digits and only as long as needed (Java's Instant.toString).
 */
export interface ProtoTimestamp {
  seconds: string | number;
  nanos: number;
}

// Events of one stream share few distinct seconds: formatting the date part once per second
// takes Date.toISOString off the per-event path.
let lastSeconds = Number.NaN;
let lastBase = "";

export function timestampToIso(ts: ProtoTimestamp): string {
  const seconds = Number(ts.seconds);
  if (seconds !== lastSeconds) {
    lastBase = new Date(seconds * 1000).toISOString().slice(0, 19);
    lastSeconds = seconds;
  }
  const base = lastBase;
  const nanos = ts.nanos ?? 0;
  if (nanos === 0) return `${base}Z`;
  let fraction = String(nanos).padStart(9, "0");
  while (fraction.endsWith("000")) fraction = fraction.slice(0, -3);
  return `${base}.${fraction}Z`;
}

const ISO = /^(\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** undefined when the text is not an ISO-8601 instant with a zone. */
export function isoToTimestamp(text: string): ProtoTimestamp | undefined {
  const match = ISO.exec(text);
  if (!match) return undefined;
  const millis = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(millis)) return undefined;
  const nanos = Number((match[2] ?? "").padEnd(9, "0"));
  return { seconds: String(Math.floor(millis / 1000)), nanos };
}
