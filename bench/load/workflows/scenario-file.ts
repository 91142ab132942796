import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { PlaceholderError } from "./placeholders.js";
import { compileWorkflow, type SaveFrom, type StepSpec, type Workflow, WorkflowError } from "./workflow.js";

/**
 * `--scenario-file FILE`: a user's own workflows, in YAML or JSON (docs/load-testing.md has a
 * whole example):
 *
 *     scenarios:
 *       NAME:
 *         weight: 3          # its share of the run's rate (default 1), or
 *         rate: 20/s         # a rate of its own (open model)
 *         steps:
 *           - name: create
 *             post: /v2/commands/submit-and-wait-for-transaction   # or get: PATH
 *             body: { ... {{party}} ... }
 *             save: { iou: { created: Main:Iou } }   # or a JSON pointer: /transaction/...
 *
 * Every fault is an error naming the file, the scenario, the step and what is wrong.
 */
export interface FileScenario {
  workflow: Workflow;
  weight?: number;
  /** As written (`20/s`): read by the mix, as `--mix` rates are. */
  rate?: string;
}

export class ScenarioFileError extends Error {}

const SCENARIO_KEYS = ["weight", "rate", "steps"];
const STEP_KEYS = ["name", "post", "get", "body", "save"];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function unknownKeys(value: Record<string, unknown>, known: string[]): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0)
    throw new WorkflowError(
      `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (known: ${known.join(", ")})`,
    );
}

function saveFrom(name: string, value: unknown): SaveFrom {
  if (typeof value === "string") return { pointer: value };
  if (isRecord(value) && typeof value.created === "string") {
    unknownKeys(value, ["created", "nth"]);
    const nth = value.nth ?? 0;
    if (!Number.isInteger(nth) || (nth as number) < 0)
      throw new WorkflowError(`save ${name}: nth is a whole number from 0`);
    return { created: value.created, nth: nth as number };
  }
  throw new WorkflowError(
    `save ${name}: a JSON pointer ('/transaction/events/0/CreatedEvent/contractId') or { created: Module:Template, nth: 0 }`,
  );
}

function step(value: unknown, index: number): StepSpec {
  if (!isRecord(value))
    throw new WorkflowError(`step ${index + 1} is not a mapping (name, post or get, body, save)`);
  const name = value.name;
  const label = `step ${index + 1}${typeof name === "string" ? ` (${name})` : ""}`;
  try {
    unknownKeys(value, STEP_KEYS);
    if (typeof name !== "string") throw new WorkflowError("has no name");
    const post = value.post;
    const get = value.get;
    if ((post === undefined) === (get === undefined))
      throw new WorkflowError("give one of post: PATH or get: PATH");
    const path = post ?? get;
    if (typeof path !== "string") throw new WorkflowError("its path is not text");
    if (value.save !== undefined && !isRecord(value.save))
      throw new WorkflowError("save is a mapping of names to JSON pointers or { created: ... }");
    const save = Object.fromEntries(
      Object.entries((value.save ?? {}) as Record<string, unknown>).map(([key, from]) => [
        key,
        saveFrom(key, from),
      ]),
    );
    return {
      name,
      method: post !== undefined ? "POST" : "GET",
      path,
      ...(value.body !== undefined && { body: value.body }),
      save,
    };
  } catch (error) {
    // compileWorkflow names the step for faults it finds; the ones found here are named here.
    throw new WorkflowError(`${label}: ${(error as Error).message}`);
  }
}

function scenario(name: string, value: unknown): FileScenario {
  try {
    if (!isRecord(value)) throw new WorkflowError("is not a mapping (weight, rate, steps)");
    unknownKeys(value, SCENARIO_KEYS);
    if (!Array.isArray(value.steps) || value.steps.length === 0)
      throw new WorkflowError("needs steps: a list of at least one step");
    const steps = value.steps.map(step);
    const { weight, rate } = value;
    if (weight !== undefined && !(Number.isInteger(weight) && (weight as number) >= 1))
      throw new WorkflowError(`weight is a whole number of at least 1; got ${JSON.stringify(weight)}`);
    if (rate !== undefined && typeof rate !== "string" && typeof rate !== "number")
      throw new WorkflowError(`rate is a rate such as 20/s; got ${JSON.stringify(rate)}`);
    if (weight !== undefined && rate !== undefined)
      throw new WorkflowError("give weight (a share of the run's rate) or rate (one of its own), not both");
    return {
      workflow: compileWorkflow({ name, steps }),
      ...(weight !== undefined && { weight: weight as number }),
      ...(rate !== undefined && { rate: String(rate) }),
    };
  } catch (error) {
    if (!(error instanceof WorkflowError || error instanceof PlaceholderError)) throw error;
    const message = (error as Error).message;
    throw new WorkflowError(message.startsWith("scenario ") ? message : `scenario ${name}: ${message}`);
  }
}

/** The file's scenarios, in its order. */
export function readScenarioFile(path: string): FileScenario[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ScenarioFileError(
      `cannot read --scenario-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  let document: unknown;
  try {
    document = parse(text, { prettyErrors: true });
  } catch (error) {
    throw new ScenarioFileError(`${path}: not YAML or JSON: ${(error as Error).message.split("\n")[0]}`);
  }
  try {
    if (!isRecord(document) || !isRecord(document.scenarios))
      throw new WorkflowError("needs `scenarios:`, a mapping of scenario names to { steps: [...] }");
    unknownKeys(document, ["scenarios"]);
    const scenarios = Object.entries(document.scenarios).map(([name, value]) => scenario(name, value));
    if (scenarios.length === 0) throw new WorkflowError("`scenarios:` names none");
    return scenarios;
  } catch (error) {
    if (!(error instanceof WorkflowError)) throw error;
    throw new ScenarioFileError(`${path}: ${error.message}`);
  }
}
