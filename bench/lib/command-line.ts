import { type ParseArgsConfig, parseArgs } from "node:util";
import { didYouMean, nearestNames } from "../../src/config/nearest-name.js";

/**
 * String options, `multiple` ones given several times and read as a list; boolean ones are
 * switches without a value.
 */
type Options = Record<
  string,
  { type: "string"; default?: string; multiple?: boolean } | { type: "boolean"; default?: boolean }
>;

type Values<O extends Options> = {
  [K in keyof O]: O[K]["type"] extends "boolean"
    ? boolean | undefined
    : O[K] extends { multiple: true }
      ? string[] | undefined
      : O[K]["default"] extends string
        ? string
        : string | undefined;
};

/**
 * A bench tool's command line: `--help` prints its usage (exit 0); an unknown flag (with the
 * nearest flag it knows, when one is near), a flag without its value or a positional it does not
 * take prints the fault and the usage line on stderr (exit 2), not a stack trace. The usage is
 * written from the options themselves, with their defaults, so it cannot drift from what the tool
 * reads.
 */
export function commandLine<O extends Options>(
  /** As run: `run.js` (a file of dist/bench), or the CLI's command (`ledger-json-gateway bench`). */
  tool: string,
  options: O,
  positionals?: string,
  /** What `--help` prints under the usage line: what the flags mean. */
  help?: string,
): {
  values: Values<O>;
  positionals: string[];
} {
  const flags = Object.entries(options).map(([name, option]) =>
    option.type === "boolean"
      ? `[--${name}]`
      : `[--${name} ${option.default ?? "VALUE"}${option.multiple ? " ..." : ""}]`,
  );
  const program = tool.startsWith("ledger-json-gateway ") ? tool : `node dist/bench/${tool}`;
  const usage = ["usage:", program, ...(positionals ? [positionals] : []), ...flags].join(" ");
  if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
    console.log(help === undefined ? usage : `${usage}\n\n${help}`);
    process.exit(0);
  }
  try {
    const parsed = parseArgs({
      options,
      allowPositionals: positionals !== undefined,
      strict: true,
    } as ParseArgsConfig);
    return parsed as never;
  } catch (error) {
    console.error(`${faultOf(error as Error & { code?: string }, Object.keys(options))}\n${usage}`);
    process.exit(2);
  }
}

/** parseArgs' fault, an unknown flag's with the nearest known one (`--treshold`: `--threshold`). */
function faultOf(error: Error & { code?: string }, names: readonly string[]): string {
  const unknown = /^Unknown option '(--?[^']+)'/.exec(error.message);
  if (error.code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION" || unknown === null) return error.message;
  const typed = (unknown[1] as string).replace(/^--?/, "").split("=")[0] as string;
  const near = nearestNames(
    typed,
    names.map((name) => ({ name: `--${name}`, spellings: [name] })),
  );
  // Node goes on about positionals after '--'; a near flag is the likelier meaning.
  return near.length > 0 ? `Unknown option '${unknown[1]}'${didYouMean(near)}` : error.message;
}
