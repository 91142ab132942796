/**
 * Numeric 10 arithmetic for the native models. The codec hands Numerics over as decimal strings
 * with exactly ten fraction digits; BigInt on the scaled value keeps every digit exact, as Daml's
 * own Numeric does (floating point would not).
 */
const SCALE = 10;
const FACTOR = 10n ** BigInt(SCALE);

export function parseNumeric10(text: string): bigint {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = (negative ? text.slice(1) : text).split(".");
  const scaled = BigInt(whole) * FACTOR + BigInt(fraction.padEnd(SCALE, "0").slice(0, SCALE) || "0");
  return negative ? -scaled : scaled;
}

export function formatNumeric10(value: bigint): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / FACTOR;
  const fraction = (abs % FACTOR).toString().padStart(SCALE, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}
