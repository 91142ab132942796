import { type MixEntry, parseMix } from "./mix.js";
import { UsageError } from "./usage-error.js";
import { IOU_WORKFLOWS } from "./workflows/iou-workflows.js";
import { type FileScenario, readScenarioFile, ScenarioFileError } from "./workflows/scenario-file.js";
import { compileWorkflow, type Workflow } from "./workflows/workflow.js";

/**
 * The command line's scenarios, read into what the run does: which built-in scenarios, which
 * workflows (built-in or from `--scenario-file`), and their shares of the load (`--mix`, or the
 * file's weights and rates).
 */

const BUILT_IN_WORKFLOWS: readonly Workflow[] = IOU_WORKFLOWS.map(compileWorkflow);
export const WORKFLOW_NAMES = BUILT_IN_WORKFLOWS.map((w) => w.name);

const DEFAULT_SCENARIOS = "submit-and-wait,updates";

export interface ScenarioChoice {
  /** The built-in (request and stream) scenarios named, in the order given. */
  names: string[];
  workflows: Workflow[];
  /** Every request scenario's and workflow's share of the load. */
  mix: MixEntry[];
}

export function scenarioChoice(
  raw: { scenario?: string | undefined; mix?: string | undefined; "scenario-file"?: string | undefined },
  builtIns: readonly string[],
  streams: readonly string[],
  parseRate: (text: string, flag: string) => number,
): ScenarioChoice {
  let file: FileScenario[] = [];
  if (raw["scenario-file"] !== undefined) {
    try {
      file = readScenarioFile(raw["scenario-file"]);
    } catch (error) {
      if (error instanceof ScenarioFileError) throw new UsageError(error.message);
      throw error;
    }
  }
  for (const { workflow } of file)
    if (builtIns.includes(workflow.name) || WORKFLOW_NAMES.includes(workflow.name))
      throw new UsageError(
        `${raw["scenario-file"]}: scenario ${workflow.name} has a built-in scenario's name`,
      );
  const weights = raw.mix === undefined ? new Map<string, MixEntry>() : parseMix(raw.mix, parseRate);
  const nothingNamed = raw.scenario === undefined && raw.mix === undefined;
  const listed = (raw.scenario ?? (nothingNamed && file.length === 0 ? DEFAULT_SCENARIOS : ""))
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const named = [...new Set([...listed, ...weights.keys()])];
  // A scenario file whose scenarios none of the names picks runs them all.
  const fileNames = file.map((s) => s.workflow.name);
  if (file.length > 0 && !named.some((name) => fileNames.includes(name))) named.push(...fileNames);
  const known = [...builtIns, ...WORKFLOW_NAMES, ...fileNames];
  for (const name of named)
    if (!known.includes(name)) throw new UsageError(`unknown scenario ${name}; known: ${known.join(", ")}`);
  if (named.length === 0) throw new UsageError("--scenario names none");
  for (const name of weights.keys())
    if (streams.includes(name))
      throw new UsageError(
        `--mix weighs request scenarios and workflows; ${name} is a stream scenario (--subscribers counts its streams)`,
      );

  const workflows = named.flatMap((name) => {
    const found =
      BUILT_IN_WORKFLOWS.find((w) => w.name === name) ?? file.find((s) => s.workflow.name === name)?.workflow;
    return found ? [found] : [];
  });
  const mix = named
    .filter((name) => !streams.includes(name))
    .map((name): MixEntry => {
      const given = weights.get(name);
      if (given) return given;
      const own = file.find((s) => s.workflow.name === name);
      if (own?.rate !== undefined)
        return {
          name,
          ratePerSecond: parseRate(own.rate, `${raw["scenario-file"]}: scenario ${name}'s rate`),
        };
      return { name, weight: own?.weight ?? 1 };
    });
  return { names: named.filter((name) => builtIns.includes(name)), workflows, mix };
}
