/** One figure of two runs: its two label cells, and its value in A and in B where each has it. */
export interface PairedFigure {
  labels: [string, string];
  a: number | undefined;
  b: number | undefined;
}

/**
 * `--compare`'s table: two label columns, then A, B and B/A ("-" where a run lacks the figure),
 * the labels left-aligned and the numbers right-aligned, as text lines.
 */
export function sideBySide(headers: [string, string], figures: readonly PairedFigure[]): string[] {
  const cell = (value: number | undefined) => (value === undefined ? "-" : String(value));
  const rows = [
    [...headers, "A", "B", "B/A"],
    ...figures.map(({ labels, a, b }) => [
      ...labels,
      cell(a),
      cell(b),
      a !== undefined && b !== undefined && a !== 0 ? (b / a).toFixed(2) : "-",
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
  return rows.map((row) =>
    row.map((text, i) => (i < 2 ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0))).join("  "),
  );
}
