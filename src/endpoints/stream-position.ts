import type { StreamPosition } from "../streams/resume-on-loss.js";

type Json = Record<string, unknown>;

/** The offset inside `{<oneof>: {<Case>: {value: {offset}}}}`, the shape of update and completion elements. */
export function caseOffset(oneof: string) {
  return (element: string): number | undefined => {
    const cases = (JSON.parse(element) as Json)[oneof] as
      | Record<string, { value?: { offset?: number } }>
      | undefined;
    const [content] = Object.values(cases ?? {});
    return content?.value?.offset;
  };
}

/** An update's or a completion stream's checkpoint element: the oneof's case comes first. */
const CHECKPOINT = /^\{"[A-Za-z]+":\{"OffsetCheckpoint"/;

export function isOffsetCheckpoint(element: string): boolean {
  return CHECKPOINT.test(element);
}

/** Where an update or completion element stands (parsed: for the few elements a resume looks at). */
export function casePosition(oneof: string): (element: string) => StreamPosition | undefined {
  const offsetOf = caseOffset(oneof);
  return (element) => {
    const offset = offsetOf(element);
    return offset === undefined ? undefined : { offset, checkpoint: isOffsetCheckpoint(element) };
  };
}
