/**
 * Text forms of the Daml scalars with a JSON representation of their own: Int64, Numeric,
 * Date and Timestamp. Parsers throw a ValueFault; formatters follow Canton's JSON API
 * (ISO-8601 UTC with `Z` and the shortest fraction; dates as YYYY-MM-DD).
 */
import { describeJson, ValueFault } from "./value-fault.js";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DIGITS = /^-?\d+$/;

/** Int64 JSON input (a string, or a safe integer number) -> canonical decimal string. */
export function parseInt64(json: unknown): string {
  if (typeof json === "number") {
    if (Number.isSafeInteger(json)) return json === 0 ? "0" : String(json);
    throw new ValueFault(
      `expected Int64, got ${describeJson(json)} (not a safe integer: pass it as a string)`,
    );
  }
  if (typeof json !== "string" || !DIGITS.test(json))
    throw new ValueFault(`expected Int64, got ${describeJson(json)}`);
  if (json.length <= 16) {
    const n = Number(json);
    return n === 0 ? "0" : String(n);
  }
  const big = BigInt(json);
  if (big < INT64_MIN || big > INT64_MAX) throw new ValueFault(`Int64 out of range: ${describeJson(json)}`);
  return big.toString();
}

const NUMERIC = /^(-)?(\d+)(?:\.(\d+))?$/;
const EXPONENT = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/;

/**
 * JavaScript prints very small and very large numbers as `1.5e-7`; spell them out with the
 * same digits (shifting the point, no rounding) so the scale check sees the real value.
 */
function expandExponent(text: string): string {
  const m = EXPONENT.exec(text);
  if (m === null) return text;
  const digits = `${m[2]}${m[3] ?? ""}`;
  const point = 1 + Number(m[4]);
  if (point <= 0) return `${m[1]}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${m[1]}${digits}${"0".repeat(point - digits.length)}`;
  return `${m[1]}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Numeric JSON input (string or number) -> the decimal string with exactly `scale`
 * fraction digits, the form the ledger itself prints. Trailing zeros beyond the scale are
 * accepted (they do not change the value); significant digits beyond it are not.
 */
export function parseNumeric(json: unknown, scale: number): string {
  let text: string;
  if (typeof json === "string") {
    text = json;
  } else if (typeof json === "number" && Number.isFinite(json)) {
    text = expandExponent(String(json));
  } else {
    throw new ValueFault(`expected Numeric, got ${describeJson(json)}`);
  }
  const m = NUMERIC.exec(text);
  if (m === null) throw new ValueFault(`expected Numeric, got ${describeJson(json)}`);
  const integer = (m[2] as string).replace(/^0+(?=\d)/, "");
  const fraction = (m[3] ?? "").replace(/0+$/, "");
  if (fraction.length > scale) {
    throw new ValueFault(
      `Numeric ${scale} allows at most ${scale} decimal places, got ${describeJson(json)}`,
    );
  }
  if (integer.length > 38 - scale) {
    throw new ValueFault(
      `Numeric ${scale} allows at most ${38 - scale} integer digits, got ${describeJson(json)}`,
    );
  }
  const negative = m[1] === "-" && (integer !== "0" || fraction !== "");
  const sign = negative ? "-" : "";
  return scale === 0 ? `${sign}${integer}` : `${sign}${integer}.${fraction.padEnd(scale, "0")}`;
}

const DAY_MS = 86_400_000;
const MIN_DATE_DAYS = -719_162; // 0001-01-01
const MAX_DATE_DAYS = 2_932_896; // 9999-12-31
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since the epoch of a valid proleptic-Gregorian date, or undefined. */
function epochDays(year: number, month: number, day: number): number | undefined {
  const d = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  d.setUTCFullYear(year, month - 1, day);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day)
    return undefined;
  return d.getTime() / DAY_MS;
}

/** Date JSON input "YYYY-MM-DD" -> days since 1970-01-01. */
export function parseDate(json: unknown): number {
  const m = typeof json === "string" ? DATE.exec(json) : null;
  if (m === null) throw new ValueFault(`expected Date (YYYY-MM-DD), got ${describeJson(json)}`);
  const days = epochDays(Number(m[1]), Number(m[2]), Number(m[3]));
  if (days === undefined || days < MIN_DATE_DAYS || days > MAX_DATE_DAYS) {
    throw new ValueFault(
      `expected a valid Date between 0001-01-01 and 9999-12-31, got ${describeJson(json)}`,
    );
  }
  return days;
}

export function formatDate(days: number): string {
  if (!Number.isInteger(days) || days < MIN_DATE_DAYS || days > MAX_DATE_DAYS) {
    throw new ValueFault(`Date out of range: ${days} days since the epoch`);
  }
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}

const MIN_TIMESTAMP_US = -62_135_596_800_000_000n; // 0001-01-01T00:00:00Z
const MAX_TIMESTAMP_US = 253_402_300_799_999_999n; // 9999-12-31T23:59:59.999999Z
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)$/;

/**
 * Timestamp JSON input (ISO-8601 with a zone: `Z` or an offset) -> microseconds since the
 * epoch as a decimal string. Digits below the microsecond are dropped, as Canton does.
 */
export function parseTimestamp(json: unknown): string {
  const m = typeof json === "string" ? TIMESTAMP.exec(json) : null;
  if (m === null) {
    throw new ValueFault(
      `expected Timestamp (ISO-8601 with a zone, e.g. 2024-01-31T12:00:00Z), got ${describeJson(json)}`,
    );
  }
  const num = (i: number): number => Number(m[i] ?? "0");
  const days = epochDays(num(1), num(2), num(3));
  const [hour, minute, second] = [num(4), num(5), num(6)];
  const [offH, offM, offS] = [num(10), num(11), num(12)];
  if (days === undefined || hour > 23 || minute > 59 || second > 59 || offH > 18 || offM > 59 || offS > 59) {
    throw new ValueFault(`expected a valid Timestamp, got ${describeJson(json)}`);
  }
  const offset = (m[9] === "-" ? -1 : 1) * (offH * 3600 + offM * 60 + offS);
  const seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
  const micros = Number((m[7] ?? "").padEnd(6, "0").slice(0, 6));
  // Exact in a double until 2255 (|micros| < 2^53); BigInt only beyond that.
  if (Math.abs(seconds) < 9_000_000_000) return String(seconds * 1_000_000 + micros);
  const total = BigInt(seconds) * 1_000_000n + BigInt(micros);
  if (total < MIN_TIMESTAMP_US || total > MAX_TIMESTAMP_US) {
    throw new ValueFault(`expected a Timestamp between 0001-01-01 and 9999-12-31, got ${describeJson(json)}`);
  }
  return total.toString();
}

/** Microseconds since the epoch (string or number) -> ISO-8601 UTC with `Z`. */
export function formatTimestamp(micros: string | number): string {
  let seconds: number;
  let fraction: number;
  const n = typeof micros === "number" ? micros : Number(micros);
  if (Number.isSafeInteger(n)) {
    seconds = Math.floor(n / 1_000_000);
    fraction = n - seconds * 1_000_000;
  } else {
    // Past 2^53 (after year 2255) a double cannot hold every microsecond.
    let big: bigint;
    try {
      big = BigInt(micros);
    } catch {
      throw new ValueFault(`invalid Timestamp value ${describeJson(micros)}`);
    }
    const sec = big / 1_000_000n - (big % 1_000_000n < 0n ? 1n : 0n);
    seconds = Number(sec);
    fraction = Number(big - sec * 1_000_000n);
  }
  if (seconds < -62_135_596_800 || seconds > 253_402_300_799) {
    throw new ValueFault(`Timestamp out of range: ${micros} microseconds since the epoch`);
  }
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (fraction === 0) return `${base}Z`;
  return `${base}.${String(fraction).padStart(6, "0").replace(/0+$/, "")}Z`;
}
