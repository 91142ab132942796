import { type ParseArgsConfig, parseArgs } from "node:util";

/** String options; `multiple` ones may be given several times and read as a list. */
type StringOptions = Record<string, { type: "string"; default?: string; multiple?: boolean }>;

type Values<O extends StringOptions> = {
  [K in keyof O]: O[K]["multiple"] extends true
    ? string[] | undefined
    : O[K]["default"] extends string
      ? string
      : string | undefined;
};

/**
 * A bench tool's command line: `--help` prints its usage (exit 0); an unknown flag, a flag
 * without its value or a positional it does not take prints the fault and the usage line on
 * stderr (exit 2), not a stack trace. The usage is written from the options themselves, with
 * their defaults, so it cannot drift from what the tool reads.
 */
export function commandLine<O extends StringOptions>(
  /** As run: `run.js`. */
  tool: string,
  options: O,
  positionals?: string,
  /** What `--help` prints under the usage line: what the flags mean. */
  help?: string,
): {
  values: Values<O>;
  positionals: string[];
} {
  const flags = Object.entries(options).map(
    ([name, option]) => `[--${name} ${option.default ?? "VALUE"}${option.multiple ? " ..." : ""}]`,
  );
  const usage = ["usage: node", `dist/bench/${tool}`, ...(positionals ? [positionals] : []), ...flags].join(
    " ",
  );
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
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
}
