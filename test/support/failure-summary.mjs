// A test reporter that prints nothing until the run ends, then lists every failed test: first
// with the head of its error, last one line each. CI keeps only the tail of a run's output; with
// TAP alone that tail is the counts, and which of 1,600 tests failed is lost.
import { relative } from "node:path";

const errorLines = 8;

export default async function* failureSummary(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== "test:fail") continue;
    const { name, file, details } = event.data;
    // A suite fails when a test in it fails; the test itself is what to read.
    if (details.type === "suite") continue;
    const error = details.error?.cause ?? details.error;
    const lines = String(error?.stack ?? error?.message ?? error)
      .split("\n")
      .filter((line) => line.trim() !== "");
    failures.push({ where: `${file ? relative(process.cwd(), file) : "?"} :: ${name}`, lines });
  }
  if (failures.length === 0) return;
  const details = failures.map(({ where, lines }) =>
    [`# not ok: ${where}`, ...lines.slice(0, errorLines).map((line) => `#     ${line}`)].join("\n"),
  );
  const index = failures.map(({ where, lines }) => `# FAILED ${where}: ${lines[0] ?? ""}`);
  yield `\n${details.join("\n")}\n# ${failures.length} failed test(s):\n${index.join("\n")}\n`;
}
