import { errorCode, type JsonClient, networkErrorCode } from "../json-client.js";
import type { SeriesRecorder } from "../recorder.js";
import type { Fill } from "./placeholders.js";
import type { Workflow } from "./workflow.js";

/** A party the run acts as, with the token (and so the user) that may act as it. */
export interface Actor {
  party: string;
  token: () => string;
  /** The token's user: the `userId` of its commands. */
  userId: string;
}

export interface WorkflowDeps {
  client: JsonClient;
  /** Iteration i acts as actors[i % n]; its `otherParty` is the next one's party. */
  actors: readonly Actor[];
  prefix: string;
  /** One recorder per step, by step name. */
  steps: ReadonlyMap<string, SeriesRecorder>;
  now: () => number;
  /** False once the run stopped counting (an answer after the drain is not counted). */
  counting: () => boolean;
}

/**
 * One iteration of a workflow as a function of its sequence number and intended send time: its
 * steps one after the other, each as soon as the one before answered. A step's latency counts from
 * when it was sent (the first one's from the iteration's intended send time, as every request of
 * the open model); the iteration's, which the caller records, from the intended send time to the
 * last answer. A failed step ends the iteration (the next ones would lack what it saves), and the
 * iteration's error code names it: `transfer: 409 CONTRACT_NOT_FOUND`.
 */
export function workflowRunner(
  workflow: Workflow,
  deps: WorkflowDeps,
): (seq: number, sentAt: number, measured: boolean) => Promise<string | undefined> {
  const { client, actors, prefix, steps, now } = deps;
  return async (seq, sentAt, measured) => {
    const actor = actors[seq % actors.length] as Actor;
    const saved = new Map<string, unknown>();
    const fill: Fill = {
      party: actor.party,
      otherParty: (actors[(seq + 1) % actors.length] as Actor).party,
      parties: actors.map((a) => a.party),
      userId: actor.userId,
      commandId: "",
      prefix,
      iteration: seq,
      saved,
    };
    let stepSentAt = sentAt;
    for (const step of workflow.steps) {
      const recorder = steps.get(step.name) as SeriesRecorder;
      fill.commandId = `${prefix}-${workflow.name}-${seq}-${step.name}`;
      let code: string | undefined;
      try {
        const answer = await client.request(
          step.method,
          step.path(fill),
          actor.token(),
          step.body === undefined ? undefined : step.body(fill),
        );
        if (answer.status < 200 || answer.status > 299) code = errorCode(answer);
        else if (step.save.length > 0) {
          const parsed = parseAnswer(answer.body);
          if (parsed === NOT_JSON) code = "answer not JSON";
          else
            for (const save of step.save) {
              const value = save.read(parsed);
              if (value === undefined) {
                code = `nothing at ${save.from} (save ${save.name})`;
                break;
              }
              saved.set(save.name, value);
            }
        }
      } catch (error) {
        code = networkErrorCode(error);
      }
      if (measured && deps.counting()) {
        if (code === undefined) recorder.record(now() - stepSentAt);
        else recorder.error(code);
      }
      if (code !== undefined) return `${step.name}: ${code}`;
      stepSentAt = now();
    }
    return undefined;
  };
}

const NOT_JSON = Symbol("not JSON");

function parseAnswer(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return NOT_JSON;
  }
}
