import { compilePath, compileTemplate, type Fill, type Filled, SAVED_NAME } from "./placeholders.js";

/**
 * A workflow scenario: a chain of JSON Ledger API requests, one iteration per arrival, where a
 * later step reads what an earlier one saved from its answer (a contract id, any value). The
 * built-in Iou workflows (iou-workflows.ts) and a user's scenario file (scenario-file.ts) are
 * both written as `WorkflowSpec`s and run by the same runner (workflow-runner.ts).
 */

/** Where a value is read from a step's answer. */
export type SaveFrom =
  /** An RFC 6901 JSON pointer into the answer, e.g. `/transaction/events/0/CreatedEvent/contractId`. */
  | { pointer: string }
  /**
   * The contract id of the `nth` (from 0) created event of a template in the answer's transaction
   * (`Module:Entity`, matched against the events' `templateId` whatever its package part).
   */
  | { created: string; nth: number };

export interface StepSpec {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  save: Record<string, SaveFrom>;
}

export interface WorkflowSpec {
  name: string;
  steps: StepSpec[];
}

interface CompiledStep {
  name: string;
  method: "GET" | "POST";
  path: (fill: Fill) => string;
  body?: Filled;
  save: { name: string; read: (answer: unknown) => unknown; from: string }[];
}

export interface Workflow {
  name: string;
  steps: CompiledStep[];
}

/** Scenario and step names: as `--threshold SCENARIO.METRIC` and `--mix NAME=W` read them. */
const SCENARIO_NAME = /^[a-z][a-z-]*$/;

export class WorkflowError extends Error {}

/** RFC 6901: `/a/0/b`, with `~1` for `/` and `~0` for `~` in a key. */
export function readPointer(value: unknown, pointer: string): unknown {
  if (pointer === "") return value;
  let at = value;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(at)) at = /^(0|[1-9]\d*)$/.test(key) ? at[Number(key)] : undefined;
    else if (at !== null && typeof at === "object") at = (at as Record<string, unknown>)[key];
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** The template's `Module:Entity`, from `#pkg:Module:Entity`, `pkgId:Module:Entity` or `Module:Entity`. */
const moduleEntity = (templateId: string) => templateId.split(":").slice(-2).join(":");

function createdContractId(answer: unknown, template: string, nth: number): unknown {
  const events = readPointer(answer, "/transaction/events");
  if (!Array.isArray(events)) return undefined;
  const wanted = moduleEntity(template);
  const ids = events
    .map((event) => (event as { CreatedEvent?: { templateId?: string; contractId?: string } }).CreatedEvent)
    .filter((created) => created?.templateId !== undefined && moduleEntity(created.templateId) === wanted)
    .map((created) => created?.contractId);
  return ids[nth];
}

/** The spec compiled: every placeholder checked against what the steps before it save. */
export function compileWorkflow(spec: WorkflowSpec): Workflow {
  if (!SCENARIO_NAME.test(spec.name))
    throw new WorkflowError(
      `scenario name '${spec.name}': lowercase letters and hyphens (as thresholds read it)`,
    );
  if (spec.steps.length === 0) throw new WorkflowError(`scenario ${spec.name} has no steps`);
  const saved = new Set<string>();
  const names = new Set<string>();
  const steps = spec.steps.map((step, i): CompiledStep => {
    const where = `scenario ${spec.name}: step ${i + 1} (${step.name})`;
    try {
      if (!SCENARIO_NAME.test(step.name))
        throw new WorkflowError(`step name '${step.name}': lowercase letters and hyphens`);
      if (names.has(step.name)) throw new WorkflowError(`a second step named ${step.name}`);
      names.add(step.name);
      if (!step.path.startsWith("/"))
        throw new WorkflowError(
          `path '${step.path}' does not start with / (e.g. /v2/commands/submit-and-wait)`,
        );
      if (step.method === "GET" && step.body !== undefined) throw new WorkflowError("a GET step has no body");
      const compiled: CompiledStep = {
        name: step.name,
        method: step.method,
        path: compilePath(step.path, saved),
        ...(step.body !== undefined && { body: compileTemplate(step.body, saved) }),
        save: Object.entries(step.save).map(([name, from]) => {
          if (!SAVED_NAME.test(name))
            throw new WorkflowError(`save '${name}': a name of letters, digits and _ (used as {{${name}}})`);
          if ("pointer" in from && from.pointer !== "" && !from.pointer.startsWith("/"))
            throw new WorkflowError(`save ${name}: '${from.pointer}' is not a JSON pointer (/a/0/b)`);
          return {
            name,
            read:
              "pointer" in from
                ? (answer: unknown) => readPointer(answer, from.pointer)
                : (answer: unknown) => createdContractId(answer, from.created, from.nth),
            from: "pointer" in from ? from.pointer : `created ${from.created} #${from.nth}`,
          };
        }),
      };
      for (const name of Object.keys(step.save)) saved.add(name);
      return compiled;
    } catch (error) {
      throw new WorkflowError(`${where}: ${(error as Error).message}`);
    }
  });
  return { name: spec.name, steps };
}
